package battery

import (
	"math"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator/sched"
)

// setups configure the engine as a source's runs configured it, where
// that differs from the engine's defaults that knee's profiles hold.
var setups = map[string]func(*Cell, presets.Spec, *sched.Config){
	"trtllm-perf":   trtllmBench,
	"gpustack":      gpustack,
	"oracle-mi300x": vllmOct2024,
}

// offline are the sources whose benchmark hands the engine its requests
// itself, with no client between (trtllm-bench throughput, vLLM's
// benchmark_latency and its CI's vllm bench latency): a batch arrives at
// one instant. The others measured over HTTP (vllm bench serve and its
// like), whose requests knee predict's client paces.
var offline = map[string]bool{"trtllm-perf": true, "oracle-mi300x": true, "vllm-ci": true}

// vllmOct2024: before vLLM 0.6.5 (PR #10544, November 2024) chunked
// prefill, which V0 turned on for contexts over 32k tokens (PR #6666),
// had a budget of 512 tokens a step, not 2,048; Llama 3.1's context is
// 128k. The blog (October 2024) sets neither.
func vllmOct2024(_ *Cell, _ presets.Spec, cfg *sched.Config) {
	if !cfg.WholePrompts {
		cfg.MaxNumBatchedTokens = 512
	}
}

// gpustack: the lab served TensorRT-LLM with --enable_chunked_prefill
// (docs/performance-lab/*/*.md, "Optimized serving script").
func gpustack(c *Cell, _ presets.Spec, cfg *sched.Config) {
	if c.Engine == "trtllm" {
		cfg.WholePrompts = false
	}
}

// trtllmBenchKVFraction is the KV cache's share of the memory left after
// the weights, as the perf overview's runs set it "in many cases"
// (--kv_cache_free_gpu_mem_fraction 0.95).
const trtllmBenchKVFraction = 0.95

// trtllmBench sizes the engine as trtllm-bench throughput does when it is
// given no limits (tensorrt_llm/bench/build/tuning.py, calc_engine_setting
// and finetune_setting): a batch of the requests the KV cache holds at the
// dataset's lengths, rounded up, and a token budget of that batch times
// (1 + ISL/OSL), both capped; the KV cache a fraction of what the weights
// leave.
func trtllmBench(c *Cell, s presets.Spec, cfg *sched.Config) {
	tp := float64(s.GPUs)
	perToken := 2 * float64(s.Model.Layers) * math.Max(tp, float64(s.Model.KVHeads)) * float64(s.Model.HeadDim) * s.KV.Bytes / (1 << 30)
	weights := s.Model.ParamsBillions * 1e9 * s.Weights.Bytes / (1 << 30)
	cache := (s.Hardware.HBMGiB*tp - weights) * trtllmBenchKVFraction
	raw := math.Min(cache/(perToken*float64(c.Input+c.Output)), 4096)
	tokens := math.Min(raw*(1+float64(c.Input)/float64(c.Output)), 32768)
	bs := roundUp(raw, []band{{256, 32, 64}, {1024, 128, 0}, {math.Inf(1), 256, 0}})
	nt := roundUp(tokens, []band{{4096, 256, 2048}, {8192, 512, 0}, {math.Inf(1), 1024, 0}})
	cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens = int(bs), int(nt)
	// Chunked context: the heuristic's token budget is below the prompts
	// of several published cells (5,000 and 20,000 tokens against 2,304
	// and 2,048 for llama-3.1-8b), which only chunking runs; and a whole
	// 2,048-token prompt would fit a 2,048-token budget only with no
	// decode beside it, serialising the batch (98% below the published
	// throughput).
	cfg.WholePrompts = false
	// The runtime's KV cache: the fraction of the memory the weights and
	// knee's activation reserve leave, where knee's presets take a share
	// of the whole memory (vLLM's gpu_memory_utilization, 0.9).
	perBlock := perToken * (1 << 30) / tp * float64(cfg.BlockSize)
	free := float64(cfg.NumBlocks)*perBlock + 0.1*s.Hardware.HBMGiB*(1<<30)
	cfg.NumBlocks = int(trtllmBenchKVFraction * free / perBlock)
}

// band is one of finetune_setting's ranges: values below below are rounded
// up to a multiple of step, and at least floor.
type band struct{ below, step, floor float64 }

func roundUp(v float64, bands []band) float64 {
	for _, b := range bands {
		if v < b.below {
			return math.Max(b.floor, b.step*math.Ceil(v/b.step))
		}
	}
	return v
}
