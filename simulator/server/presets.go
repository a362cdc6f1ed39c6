package server

import (
	"fmt"

	"github.com/kneebench/knee/presets"
)

// PresetModels builds a models file serving one preset model on one preset
// GPU with the scheduler engine and prefix caching. The batching limits
// follow vLLM's server defaults: 8,192 batched tokens and 1,024 sequences
// on GPUs of 70 GiB or more other than the A100, else 2,048 and 256
// (vllm/engine/arg_utils.py). Efficiencies and the step overhead are rough
// figures for a real engine, not a calibration.
func PresetModels(gpu, model string) (*ModelsFile, error) {
	hw, ok := presets.HardwareNamed(gpu)
	if !ok {
		return nil, fmt.Errorf("unknown hardware preset %q (see knee presets)", gpu)
	}
	m, ok := presets.ModelNamed(model)
	if !ok {
		return nil, fmt.Errorf("unknown model preset %q (see knee presets)", model)
	}
	budget, seqs := 2048, 256
	if hw.HBMGiB >= 70 && hw.Name != "a100-80gb" {
		budget, seqs = 8192, 1024
	}
	kv := &KVCacheSpec{Layers: m.Layers, KVHeads: m.KVHeads, HeadDim: m.HeadDim, BytesPerElement: 2,
		BlockSize: 16, GPUMemoryUtilization: 0.9}
	if m.SlidingWindow > 0 {
		kv.SlidingWindow, kv.GlobalLayers = m.SlidingWindow, m.GlobalLayers
	}
	on := true
	f := &ModelsFile{
		Hardware: map[string]HardwareSpec{hw.Name: {HBMGiB: hw.HBMGiB, MemoryBandwidthGBps: hw.BandwidthGBps, PeakTFLOPS: hw.PeakTFLOPS}},
		Models: []ModelSpec{{
			Name: m.Name, ContextLength: m.ContextLength, Engine: "scheduler", Hardware: hw.Name,
			Weights:        &WeightsSpec{ParametersBillions: m.ParamsBillions, BytesPerParameter: m.BytesPerParameter},
			KVCache:        kv,
			Scheduler:      &SchedulerSpec{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs},
			Latency:        &LatencySpec{StepOverheadMs: 2},
			Efficiency:     &EfficiencySpec{Compute: 0.5, Memory: 0.8},
			TensorParallel: m.TensorParallel,
			PrefixCaching:  &on,
		}},
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("preset %s on %s: %v", m.Name, hw.Name, err)
	}
	return f, nil
}
