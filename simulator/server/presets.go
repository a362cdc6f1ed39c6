package server

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
			InterconnectGBps: hw.InterconnectGBps, InterconnectLatencyUs: latency}},
		Models: []ModelSpec{{
			Name: m.Name, ContextLength: m.ContextLength, Engine: EngineScheduler, Hardware: hw.Name,
			Weights:        &WeightsSpec{ParametersBillions: m.ParamsBillions, DType: s.Weights.Name},
			Architecture:   &ArchitectureSpec{HiddenSize: m.HiddenSize, AttentionHeads: m.AttentionHeads},
			Experts:        experts,
			KVCache:        kv,
			Scheduler:      &SchedulerSpec{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs},
			Latency:        &LatencySpec{StepOverheadMs: t.StepOverheadMs, PerSequenceOverheadMs: t.SeqOverheadMs},
			Efficiency:     &EfficiencySpec{Compute: t.ComputeEff, Memory: t.MemoryEff},
			TensorParallel: s.GPUs,
			PrefixCaching:  &on,
		}},
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("preset %s: %v", s, err)
	}
	return f, nil
}
