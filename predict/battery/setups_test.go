package battery

import "testing"

// TestTrtllmBenchSizing: trtllm-bench's heuristic, worked by hand for
// llama-3.1-8b in FP8 (64 KiB of FP8 KV a token, 7.48 GiB of weights) on
// one 80 GiB H100: 68.9 GiB of cache holds 551 requests of 1,024 + 1,024
// tokens (a batch of 640, rounded up by 128; 1,102 tokens, raised to the
// 2,048 floor) and 4,409 of 128 + 128 (capped at 4,096; 8,192 tokens).
func TestTrtllmBenchSizing(t *testing.T) {
	for _, tc := range []struct {
		in, out     int
		seqs, batch int
	}{
		{1024, 1024, 640, 2048},
		{128, 128, 4096, 8192},
	} {
		c := &Cell{Name: "t", Source: "trtllm-perf", GPU: "h100-80gbx1", Model: "llama-3.1-8b@fp8,kv=fp8", Engine: "trtllm",
			Input: tc.in, Output: tc.out, Requests: 1, Measured: map[string]float64{"out_tps": 1}}
		cfg, spec, err := c.Config()
		if err != nil {
			t.Fatal(err)
		}
		trtllmBench(c, spec, &cfg)
		if cfg.MaxNumSeqs != tc.seqs || cfg.MaxNumBatchedTokens != tc.batch || cfg.WholePrompts {
			t.Errorf("%d/%d: batch %d, tokens %d, whole prompts %v; want %d, %d, chunked", tc.in, tc.out,
				cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens, cfg.WholePrompts, tc.seqs, tc.batch)
		}
	}
}

// TestVLLMOct2024Budget: V0 chunks Llama 3.1's 128k context at the
// budget of October 2024, 512 tokens, and keeps whole prompts (no budget
// change) for a model of 32k tokens or less.
func TestVLLMOct2024Budget(t *testing.T) {
	for _, tc := range []struct {
		gpu, model string
		chunked    bool
		budget     int
	}{
		{"mi300xx8", "llama-3.1-405b@fp8", true, 512},
		{"h100-80gbx1", "qwen2.5-7b", false, 32768},
	} {
		c := &Cell{Name: "t", Source: "oracle-mi300x", GPU: tc.gpu, Model: tc.model, Engine: "vllm-v0",
			Input: 128, Output: 128, Requests: 1, Measured: map[string]float64{"e2e_max": 1}}
		cfg, spec, err := c.Config()
		if err != nil {
			t.Fatal(err)
		}
		vllmOct2024(c, spec, &cfg)
		if cfg.WholePrompts == tc.chunked || cfg.MaxNumBatchedTokens != tc.budget || cfg.MaxNumSeqs != 256 {
			t.Errorf("%s: whole prompts %v, budget %d, %d sequences; want chunked %v, %d, 256",
				tc.model, cfg.WholePrompts, cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs, tc.chunked, tc.budget)
		}
	}
}
