package model

import (
	"strings"
	"testing"
)

// TestMultiStepFields: num_scheduler_steps and multi_step_stream_outputs
// reach the core beside a preset under vLLM V0's rules; max_model_len
// serves a shorter context (and with it V0's rules without chunked
// prefill); what V0 could not run, or the fields cannot mean, is refused
// naming the field and what to give.
func TestMultiStepFields(t *testing.T) {
	const v0 = "schedules_as: vllm-v0\n    max_model_len: 8192\n    "
	for _, tc := range []struct {
		name, extra, err string
		steps            int
		atEnd            bool
	}{
		{name: "window of 8", extra: v0 + "num_scheduler_steps: 8", steps: 8},
		{name: "at the window's end", extra: v0 + "num_scheduler_steps: 8\n    multi_step_stream_outputs: false", steps: 8, atEnd: true},
		{name: "under V1", extra: "num_scheduler_steps: 8", err: "give schedules_as: vllm-v0"},
		{name: "128k context", extra: "schedules_as: vllm-v0\n    num_scheduler_steps: 8", err: "give max_model_len: 32768 or less"},
		{name: "outputs alone", extra: v0 + "multi_step_stream_outputs: false", err: "give num_scheduler_steps above 1"},
		{name: "too many", extra: v0 + "num_scheduler_steps: 5000", err: "1 (every step scheduled) up to 1024"},
		{name: "negative overhead", extra: "schedule_overhead_ms: -1", err: "schedule_overhead_ms -1: 0 up to 1000"},
		{name: "NaN overhead", extra: "schedule_overhead_ms: .nan", err: "schedule_overhead_ms .nan is not a finite number"},
		{name: "context above the model's", extra: "max_model_len: 1000000", err: "up to the model's 131072 tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "models:\n  - name: m\n    preset: h100-80gb/llama-3.1-8b\n    " + tc.extra + "\n"
			mf, err := ParseModels("m.yml", []byte(file))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := &mf.Models[0]
			cfg := mf.SchedConfig(m)
			if cfg.SchedulerSteps != tc.steps || cfg.Outputs().AtWindowEnd != tc.atEnd || m.ContextLength != 8192 {
				t.Errorf("steps %d, at the window's end %v, context %d; want %d, %v, 8192",
					cfg.SchedulerSteps, cfg.Outputs().AtWindowEnd, m.ContextLength, tc.steps, tc.atEnd)
			}
			if !cfg.WholePrompts || cfg.MaxNumBatchedTokens != 8192 {
				t.Errorf("V0 at 8k: whole prompts %v, budget %d; want true, 8192", cfg.WholePrompts, cfg.MaxNumBatchedTokens)
			}
			if err := cfg.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}
