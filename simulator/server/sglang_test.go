package server

import (
	"strings"
	"testing"
)

// TestSchedulesAsSGLang: schedules_as: sglang gives a preset model
// SGLang's defaults: prefill and decode in separate steps, prompt chunks
// sized by the GPU's memory (4,096 tokens on a 48 GB L40S, 8,192 on an
// 80 GB H100), a running-request cap from the KV cache; vLLM's rules are
// the default; the policies and the threshold each engine lacks are
// refused, naming what to do.
func TestSchedulesAsSGLang(t *testing.T) {
	for _, tc := range []struct {
		name, preset, extra string
		prefillFirst        bool
		chunk               int
		policy, err         string
	}{
		{name: "vllm default", preset: "l40s/gemma-3-12b", chunk: 2048},
		{name: "sglang on an L40S", preset: "l40s/gemma-3-12b", extra: "schedules_as: sglang", prefillFirst: true, chunk: 4096},
		{name: "sglang on an H100", preset: "h100-80gb/llama-3.1-8b", extra: "schedules_as: sglang", prefillFirst: true, chunk: 8192},
		{name: "sglang lpm", preset: "h100-80gb/llama-3.1-8b", extra: "schedules_as: sglang\n    scheduling_policy: lpm", prefillFirst: true, chunk: 8192, policy: "lpm"},
		{name: "lpm under vllm", preset: "h100-80gb/llama-3.1-8b", extra: "scheduling_policy: lpm", err: "schedules_as: sglang"},
		{name: "threshold under sglang", preset: "h100-80gb/llama-3.1-8b", extra: "schedules_as: sglang\n    long_prefill_token_threshold: 512", err: "sglang (schedules_as: sglang) has none"},
		{name: "unknown rules", preset: "h100-80gb/llama-3.1-8b", extra: "schedules_as: trt", err: `schedules_as "trt": vllm, vllm-v0, sglang or trtllm`},
		{name: "vllm-v0 at 128k context", preset: "h100-80gb/llama-3.1-8b", extra: "schedules_as: vllm-v0", chunk: 2048},
		{name: "trtllm", preset: "h100-80gb/llama-3.1-8b", extra: "schedules_as: trtllm", chunk: 8192},
		{name: "lpm under trtllm", preset: "h100-80gb/llama-3.1-8b", extra: "schedules_as: trtllm\n    scheduling_policy: lpm", err: "(lpm is sglang's: schedules_as: sglang)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "models:\n  - name: m\n    preset: " + tc.preset + "\n"
			if tc.extra != "" {
				file += "    " + tc.extra + "\n"
			}
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
			cfg := mf.SchedConfig(&mf.Models[0])
			if cfg.PrefillFirst != tc.prefillFirst || cfg.MaxNumBatchedTokens != tc.chunk || cfg.Policy != tc.policy {
				t.Errorf("prefill first %v, chunk %d, policy %q; want %v, %d, %q", cfg.PrefillFirst, cfg.MaxNumBatchedTokens, cfg.Policy, tc.prefillFirst, tc.chunk, tc.policy)
			}
			if tc.prefillFirst {
				// Half the KV cache's tokens, within the request pool's
				// 2,048-4,096.
				tokens := cfg.NumBlocks * cfg.BlockSize
				if cfg.MaxNumSeqs > tokens/2 || cfg.MaxNumSeqs > 4096 || cfg.MaxNumSeqs < min(2048, tokens/2) {
					t.Errorf("max running requests %d for %d KV tokens", cfg.MaxNumSeqs, tokens)
				}
			}
		})
	}
}
