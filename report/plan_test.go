package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestPlanChartLabelsNameTheGPUs: a plan's bars are labelled by replicas
// and GPUs per replica, from the row rather than its name, which for a
// calibrated configuration is its models file's path; the model is named
// only when the plan has several.
func TestPlanChartLabelsNameTheGPUs(t *testing.T) {
	for _, c := range []struct {
		rows []results.PlanRow
		want []string
	}{
		{[]results.PlanRow{{Config: "out/fit.yml:llama-3.1-8b", GPU: "h100-80gb", TP: 1, Model: "llama-3.1-8b", Replicas: 1}}, []string{"1 × h100-80gb"}},
		{[]results.PlanRow{{Config: "h100-80gbx2/llama-3.1-70b", GPU: "h100-80gb", TP: 2, Model: "llama-3.1-70b", Replicas: 3, Routing: "least-loaded"}},
			[]string{"3 × h100-80gbx2 · least-loaded"}},
		{[]results.PlanRow{{Config: "l4/llama-3.1-8b", GPU: "l4", TP: 1, Model: "llama-3.1-8b", Replicas: 2}, {Config: "l4/qwen", GPU: "l4", TP: 1, Model: "qwen"}},
			[]string{"2 × l4/llama-3.1-8b", "1 × l4/qwen"}},
	} {
		js := planData(&results.Plan{Rows: c.rows})
		for i, want := range c.want {
			if got := js.Rows[i].Label; got != want {
				t.Errorf("label %q, want %q", got, want)
			}
		}
	}
}

// TestPlanSaysWhenVLLMNeedsAShorterContext: a configuration whose KV
// cache holds no request of the model's whole context is marked, its
// longest --max-model-len said under the table and in the answer.
func TestPlanSaysWhenVLLMNeedsAShorterContext(t *testing.T) {
	p := &results.Plan{Target: 1, Axis: "rate", Rows: []results.PlanRow{
		{Config: "l4x1/m", Replicas: 1, GPUs: 1, Meets: true, MaxModelLen: 38032},
		{Config: "h100-80gbx1/m", Replicas: 1, GPUs: 1, Meets: true},
	}}
	var b bytes.Buffer
	if err := Plan(&b, p); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{"l4x1/m †", "with vLLM's --max-model-len at most 38,032",
		"serve it with --max-model-len at most 38,032 (l4x1/m)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
	if strings.Contains(out, "h100-80gbx1/m †") {
		t.Errorf("a configuration that starts at the whole context is marked:\n%s", b.String())
	}
}

// TestStoppedPlanGivesNoAnswer: a plan stopped before its search ended
// names no cheapest fleet: a configuration it never reached may be
// cheaper. It says how much was left and what met the SLO so far.
func TestStoppedPlanGivesNoAnswer(t *testing.T) {
	p := &results.Plan{Interrupted: true, Rows: []results.PlanRow{
		{Config: "h100-80gbx1/m", Replicas: 3, Meets: true, Routing: "round-robin", Why: results.WhyStopped},
		{Config: "h100-80gbx1/m", Replicas: 3, Routing: "least-loaded", Why: results.WhyStopped},
		{Config: "l40sx1/m", Why: results.WhyStopped},
	}}
	got := p.Answer()
	want := "none: the search was stopped with 2 of 2 configurations unfinished; the cheapest meeting the SLO so far is 3 × h100-80gbx1/m"
	if !strings.HasPrefix(got, want) {
		t.Errorf("answer %q, want it to open %q", got, want)
	}
	p.Interrupted = false
	if got := p.Answer(); !strings.HasPrefix(got, "3 × h100-80gbx1/m") {
		t.Errorf("a finished plan's answer: %q", got)
	}
}
