package model

import (
	"fmt"

	"github.com/kneebench/knee/presets"
)

// activationReserveGiB is the memory per GPU a preset keeps out of the KV
// cache for activations, CUDA graphs and the runtime: about what vLLM's
// profiling run leaves aside for an 8 B model at 8,192 batched tokens.
const activationReserveGiB = 2

// PresetModels builds a models file serving one preset model on preset
// GPUs with the scheduler engine and prefix caching. The batching limits
// follow vLLM's server defaults: 8,192 batched tokens and 1,024 sequences
// on GPUs of 70 GiB or more other than the A100, else 2,048 and 256
// (vllm/engine/arg_utils.py). Efficiencies and overheads are the GPU
// family's tuning (see knee presets), a priori unless a fit says otherwise.
func PresetModels(s presets.Spec) (*ModelsFile, error) {
	f := presetFile(s)
	if err := f.Validate(); err != nil {
		if blocks(s) < 1 {
			return nil, fmt.Errorf("preset %s: %v%s", s, err, fitHint(s))
		}
		return nil, fmt.Errorf("preset %s: %v", s, err)
	}
	return f, nil
}

// blocks is the KV cache's blocks a preset's memory leaves, 0 when the
// weights leave none, computed as PresetModels' models file computes it.
func blocks(s presets.Spec) int {
	f := presetFile(s)
	return f.SchedConfig(&f.Models[0]).NumBlocks
}

// presetFile is the models file of a preset, not yet validated.
func presetFile(s presets.Spec) *ModelsFile {
	hw, m := s.Hardware, s.Model
	budget, seqs := 2048, 256
	if hw.HBMGiB >= 70 && hw.Family != "ampere" {
		budget, seqs = 8192, 1024
	}
	kv := &KVCacheSpec{Layers: m.Layers, KVHeads: m.KVHeads, HeadDim: m.HeadDim, DType: s.KV.Name,
		BlockSize: 16, GPUMemoryUtilization: 0.9, ReserveGiB: activationReserveGiB}
	if m.SlidingWindow > 0 {
		kv.SlidingWindow, kv.GlobalLayers = m.SlidingWindow, m.GlobalLayers
	}
	var experts *ExpertsSpec
	if m.Experts > 0 {
		experts = &ExpertsSpec{Count: m.Experts, PerToken: m.ExpertsPerToken, ParametersBillions: m.ExpertParamsBillions}
	}
	t := hw.Tuning
	latency := hw.InterconnectLatencyUs
	if t.AllReduceLatencyUs > 0 {
		latency = t.AllReduceLatencyUs
	}
	on := true
	f := &ModelsFile{
		Hardware: map[string]HardwareSpec{hw.Name: {
			HBMGiB: hw.HBMGiB, MemoryBandwidthGBps: hw.BandwidthGBps, PeakTFLOPS: hw.PeakTFLOPS, PeakTFLOPSFP8: hw.PeakTFLOPS8,
			InterconnectGBps: hw.InterconnectGBps, InterconnectLatencyUs: latency, IdlePowerW: hw.IdleW, MaxPowerW: hw.MaxW}},
		Models: []ModelSpec{{
			Name: m.Name, ContextLength: m.ContextLength, Engine: EngineScheduler, Hardware: hw.Name,
			Weights:        &WeightsSpec{ParametersBillions: m.ParamsBillions, DType: s.Weights.Name},
			Architecture:   &ArchitectureSpec{HiddenSize: m.HiddenSize, AttentionHeads: m.AttentionHeads, VocabSize: m.VocabSize, TiedEmbeddings: m.TiedEmbeddings},
			Experts:        experts,
			KVCache:        kv,
			Scheduler:      &SchedulerSpec{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs},
			Latency:        &LatencySpec{StepOverheadMs: t.StepOverheadMs, PerSequenceOverheadMs: t.SeqOverheadMs},
			Efficiency:     &EfficiencySpec{Compute: t.ComputeEff, Memory: t.MemoryEff},
			TensorParallel: s.GPUs,
			PrefixCaching:  &on,
		}},
	}
	return f
}

// fitTokens is what a preset's KV cache must hold to count as fitting a
// model: one sequence of its context, or of 32,768 tokens when its
// context is longer.
func fitTokens(m presets.Model) int { return min(m.ContextLength, 32768) }

// fitHint names the smallest preset (the least GPU memory in all, then
// the fewest GPUs) of the same model and formats whose KV cache holds
// fitTokens, and the same GPUs with fp8 weights when they would.
func fitHint(s presets.Spec) string {
	type cand struct {
		spec presets.Spec
		mem  float64
	}
	var cands []cand
	for _, hw := range presets.AllHardware() {
		for _, n := range []int{1, 2, 4, 8, 16} {
			c := s
			c.Hardware, c.GPUs = hw, n
			if blocks(c)*16 >= fitTokens(s.Model) {
				cands = append(cands, cand{c, hw.HBMGiB * float64(n)})
				break
			}
		}
	}
	hint := fmt.Sprintf(" (the %s weights alone need about %.0f GB)", s.Weights.Name, s.Model.ParamsBillions*s.Weights.Bytes)
	if len(cands) > 0 {
		best := cands[0]
		for _, c := range cands[1:] {
			if c.mem < best.mem || c.mem == best.mem && c.spec.GPUs < best.spec.GPUs {
				best = c
			}
		}
		hint += fmt.Sprintf("; the smallest preset whose KV cache holds a %d-token sequence is %s", fitTokens(s.Model), best.spec)
	}
	if fp8, ok := presets.DTypeNamed("fp8"); ok && s.Weights.Name != "fp8" {
		c := s
		c.Weights = fp8
		if blocks(c)*16 >= fitTokens(s.Model) {
			hint += fmt.Sprintf(", or on these GPUs with fp8 weights, %s", c)
		}
	}
	return hint
}

// PresetKV says what a preset's KV cache is: its format, and the blocks
// and tokens it holds; for fp8 weights with a bf16 cache, what kv=fp8
// would hold instead.
func PresetKV(s presets.Spec) string {
	n := blocks(s)
	out := fmt.Sprintf("weights %s, KV cache %s: %s blocks of 16 tokens (%s tokens) per replica", s.Weights.Name, s.KV.Name, commas(n), commas(16*n))
	if s.KV.Bytes > 1 && s.Weights.Bytes <= 1 {
		if fp8, ok := presets.DTypeNamed("fp8"); ok {
			c := s
			c.KV = fp8
			out += fmt.Sprintf("; an fp8 KV cache (%s) would hold %s blocks: add kv=fp8 where the server stores its cache in fp8 (vLLM's --kv-cache-dtype fp8)", c, commas(blocks(c)))
		}
	}
	if f, err := PresetModels(s); err == nil {
		if n := f.StartLimit(&f.Models[0]); n > 0 {
			out += fmt.Sprintf("; vLLM refuses to start this at the model's %s-token context: it starts with --max-model-len %s or less (knee sim serves it as it is)",
				commas(f.Models[0].ContextLength), commas(n))
		}
	}
	return out
}

// commas writes n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ModelsOfPreset is the models file of a preset spec,
// GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]] (see presets.ParseSpec).
func ModelsOfPreset(spec string) (*ModelsFile, error) {
	s, err := presets.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return PresetModels(s)
}
