package predict

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestCandidatesUnderEachEngine: several engines plan every configuration
// under each, named after it, each model scheduling by its rules.
func TestCandidatesUnderEachEngine(t *testing.T) {
	spec := CandidateSpec{GPUs: "h100-80gb", Models: "llama-3.1-8b", TPs: "1", SchedulesAs: "vllm,trtllm,vllm-v0"}
	cands, err := spec.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cands {
		_, engine, _ := strings.Cut(c.Name, " · ")
		if m := c.Target.Models.Models[0]; m.SchedulesAs != engine {
			t.Errorf("%s schedules as %q", c.Name, m.SchedulesAs)
		}
		cfg, _, err := c.Target.Config()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, engine+":"+SchedulingText(cfg)[:12])
	}
	want := "vllm:vLLM V1 sche trtllm:TensorRT-LLM vllm-v0:vLLM V0 sche"
	if strings.Join(got, " ") != want {
		t.Errorf("candidates %q, want %q", strings.Join(got, " "), want)
	}
}

// TestGPUCounts: GPUxN takes N from 1 to 64; a known GPU with another
// count says the count is wrong, not that the GPU is unknown.
func TestGPUCounts(t *testing.T) {
	for _, c := range []struct{ gpus, want string }{
		{"h100-80gbx2", ""},
		{"h100-80gbx0", `"0" is no count of GPUs`},
		{"h100-80gbx65", `"65" is no count of GPUs`},
		{"h900x2", `unknown GPU "h900x2"`},
	} {
		_, err := CandidateSpec{GPUs: c.gpus, Models: "llama-3.1-8b", TPs: "auto"}.Candidates()
		if got := fmt.Sprint(err); (c.want == "") != (err == nil) || !strings.Contains(got, c.want) {
			t.Errorf("%s: %v, want %q", c.gpus, err, c.want)
		}
	}
}

// TestPricePooled: a generating fleet costs per million output tokens, a
// pooling one (no output) per million prompt tokens.
func TestPricePooled(t *testing.T) {
	gen := results.PlanRow{GPUs: 2, AtTarget: &results.PlanFigures{OutputTokensPerS: 1000}}
	Price(&gen, 3)
	pooled := results.PlanRow{GPUs: 2, AtTarget: &results.PlanFigures{PromptTokensPerS: 40000}}
	Price(&pooled, 3)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12*b }
	if !near(gen.CostPerMOutputTokens, 6/(1000*3600.0)*1e6) || gen.CostPerMPromptTokens != 0 ||
		!near(pooled.CostPerMPromptTokens, 6/(40000*3600.0)*1e6) || pooled.CostPerMOutputTokens != 0 {
		t.Errorf("generating %+v; pooling %+v", gen, pooled)
	}
}
