package report

import (
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
