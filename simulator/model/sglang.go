package model

import "github.com/kneebench/knee/simulator/sched"

// SGLangRules makes cfg schedule as SGLang's defaults do on a GPU of
// hbmGiB for a model of contextLen tokens (sglang server_args and
// scheduler, 2026):
//   - enable_mixed_chunk off: a step either extends prompts or decodes,
//     and extends whenever a prompt is pending (sched.Config.PrefillFirst);
//   - chunked_prefill_size by the GPU's memory: 2,048 tokens under 35 GiB,
//     4,096 under 60 (L40S, A100-40GB), 8,192 under 160 (H100, H200),
//     16,384 above (B200, MI300X); max_prefill_tokens (16,384) never binds
//     below it;
//   - max_running_requests: half the KV cache's tokens, at most the
//     request pool's 2,048–4,096 slots (512 per context's worth of KV).
//
// What knee keeps of its own: prefix caching in the model's blocks (SGLang's
// radix cache matches single tokens; a hit differs by under a block), and
// vLLM's preemption by recomputation where SGLang retracts on its
// new-token-ratio estimate.
func SGLangRules(cfg *sched.Config, hbmGiB float64, contextLen int) {
	cfg.PrefillFirst, cfg.ReserveDecodes, cfg.Rules = true, true, SchedulesSGLang
	switch {
	case hbmGiB < 35:
		cfg.MaxNumBatchedTokens = 2048
	case hbmGiB < 60:
		cfg.MaxNumBatchedTokens = 4096
	case hbmGiB < 160:
		cfg.MaxNumBatchedTokens = 8192
	default:
		cfg.MaxNumBatchedTokens = 16384
	}
	tokens := cfg.NumBlocks * cfg.BlockSize
	pool := 4096
	if contextLen > 0 {
		pool = min(max(tokens/contextLen*512, 2048), 4096)
	}
	cfg.MaxNumSeqs = max(min(tokens/2, pool), 1)
}
