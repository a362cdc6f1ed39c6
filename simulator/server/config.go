package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kneebench/knee/simulator/sched"
	"go.yaml.in/yaml/v3"
)

// ModelsFile is the parsed form of a models.yml.
type ModelsFile struct {
	Hardware map[string]HardwareSpec `yaml:"hardware"`
	Models   []ModelSpec             `yaml:"models"`
}

// HardwareSpec is one GPU profile, defined once and referenced by name.
type HardwareSpec struct {
	HBMGiB              float64 `yaml:"hbm_gib"`
	MemoryBandwidthGBps float64 `yaml:"memory_bandwidth_gbps"`
	PeakTFLOPS          float64 `yaml:"peak_tflops"`
}

// ModelSpec is one served model.
type ModelSpec struct {
	Name           string          `yaml:"name"`
	ContextLength  int             `yaml:"context_length"`
	Engine         string          `yaml:"engine"`
	FixedRate      *FixedRateSpec  `yaml:"fixed_rate"`
	Hardware       string          `yaml:"hardware"`
	Weights        *WeightsSpec    `yaml:"weights"`
	KVCache        *KVCacheSpec    `yaml:"kv_cache"`
	Scheduler      *SchedulerSpec  `yaml:"scheduler"`
	Latency        *LatencySpec    `yaml:"latency"`
	Efficiency     *EfficiencySpec `yaml:"efficiency"`
	TensorParallel int             `yaml:"tensor_parallel"`
	PrefixCaching  *bool           `yaml:"prefix_caching"`
	Faults         *FaultSpec      `yaml:"faults"`
}

// FixedRateSpec configures the fixed_rate engine.
type FixedRateSpec struct {
	OverheadMs             float64 `yaml:"overhead_ms"`
	PrefillTokensPerSecond float64 `yaml:"prefill_tokens_per_second"`
	DecodeTokensPerSecond  float64 `yaml:"decode_tokens_per_second"`
}

// WeightsSpec sizes the model's weights.
type WeightsSpec struct {
	ParametersBillions float64 `yaml:"parameters_billions"`
	BytesPerParameter  float64 `yaml:"bytes_per_parameter"`
}

// KVCacheSpec sizes the KV cache: either bytes_per_token, or the layer
// shape (layers × kv_heads × head_dim × bytes_per_element, for K and V).
// With sliding_window, only global_layers hold every token; the others hold
// at most sliding_window tokens.
type KVCacheSpec struct {
	BytesPerToken        float64 `yaml:"bytes_per_token"`
	Layers               int     `yaml:"layers"`
	KVHeads              int     `yaml:"kv_heads"`
	HeadDim              int     `yaml:"head_dim"`
	BytesPerElement      float64 `yaml:"bytes_per_element"`
	SlidingWindow        int     `yaml:"sliding_window"`
	GlobalLayers         int     `yaml:"global_layers"`
	BlockSize            int     `yaml:"block_size"`
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization"`
	Watermark            float64 `yaml:"watermark"`
}

// SchedulerSpec holds the batching limits.
type SchedulerSpec struct {
	MaxNumBatchedTokens int `yaml:"max_num_batched_tokens"`
	MaxNumSeqs          int `yaml:"max_num_seqs"`
}

// LatencySpec holds fixed costs.
type LatencySpec struct {
	StepOverheadMs float64 `yaml:"step_overhead_ms"`
}

// EfficiencySpec scales peak compute and bandwidth.
type EfficiencySpec struct {
	Compute float64 `yaml:"compute"`
	Memory  float64 `yaml:"memory"`
}

// ParseModels parses and validates a models file.
func ParseModels(name string, data []byte) (*ModelsFile, error) {
	var f ModelsFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &f, nil
}

// Validate checks every model and reports the first problem, naming it.
func (f *ModelsFile) Validate() error {
	if len(f.Models) == 0 {
		return errors.New("no models")
	}
	for name, hw := range f.Hardware {
		if hw.HBMGiB <= 0 || hw.MemoryBandwidthGBps <= 0 || hw.PeakTFLOPS <= 0 {
			return fmt.Errorf("hardware %q: hbm_gib, memory_bandwidth_gbps and peak_tflops must be positive", name)
		}
	}
	seen := map[string]bool{}
	for i := range f.Models {
		m := &f.Models[i]
		if m.Name == "" {
			return fmt.Errorf("model %d: missing name", i+1)
		}
		if seen[m.Name] {
			return fmt.Errorf("model %q: duplicate name", m.Name)
		}
		seen[m.Name] = true
		if err := f.validateModel(m); err != nil {
			return fmt.Errorf("model %q: %v", m.Name, err)
		}
	}
	return nil
}

func (f *ModelsFile) validateModel(m *ModelSpec) error {
	if m.ContextLength <= 0 {
		return errors.New("context_length must be positive")
	}
	if m.Faults != nil {
		if err := m.Faults.Validate(); err != nil {
			return fmt.Errorf("faults: %v", err)
		}
	}
	switch m.Engine {
	case "instant":
		return nil
	case "fixed_rate":
		fr := m.FixedRate
		if fr == nil {
			return errors.New("engine fixed_rate needs a fixed_rate section")
		}
		if fr.PrefillTokensPerSecond <= 0 || fr.DecodeTokensPerSecond <= 0 || fr.OverheadMs < 0 {
			return errors.New("fixed_rate: prefill and decode rates must be positive and overhead not negative")
		}
		return nil
	case "scheduler":
		for _, s := range []struct {
			ok   bool
			name string
		}{{m.Hardware != "", "hardware"}, {m.Weights != nil, "weights"}, {m.KVCache != nil, "kv_cache"}, {m.Scheduler != nil, "scheduler"}} {
			if !s.ok {
				return fmt.Errorf("engine scheduler needs a %s section", s.name)
			}
		}
		if _, ok := f.Hardware[m.Hardware]; !ok {
			return fmt.Errorf("unknown hardware profile %q", m.Hardware)
		}
		if m.Weights.ParametersBillions <= 0 || m.Weights.BytesPerParameter <= 0 {
			return errors.New("weights: parameters_billions and bytes_per_parameter must be positive")
		}
		kv := m.KVCache
		if kv.BytesPerToken <= 0 && (kv.Layers <= 0 || kv.KVHeads <= 0 || kv.HeadDim <= 0 || kv.BytesPerElement <= 0) {
			return errors.New("kv_cache: give bytes_per_token, or layers, kv_heads, head_dim and bytes_per_element")
		}
		if kv.SlidingWindow < 0 || (kv.SlidingWindow > 0 && (kv.Layers <= 0 || kv.GlobalLayers <= 0 || kv.GlobalLayers > kv.Layers)) {
			return errors.New("kv_cache: sliding_window needs layers and 0 < global_layers ≤ layers")
		}
		if kv.BlockSize < 0 || kv.GPUMemoryUtilization < 0 || kv.GPUMemoryUtilization > 1 || kv.Watermark < 0 || kv.Watermark >= 1 {
			return errors.New("kv_cache: block_size must be positive, gpu_memory_utilization in (0, 1], watermark in [0, 1)")
		}
		if m.Scheduler.MaxNumBatchedTokens <= 0 || m.Scheduler.MaxNumSeqs <= 0 {
			return errors.New("scheduler: max_num_batched_tokens and max_num_seqs must be positive")
		}
		if m.TensorParallel < 0 {
			return errors.New("tensor_parallel must be positive")
		}
		if e := m.Efficiency; e != nil && (e.Compute <= 0 || e.Compute > 1 || e.Memory <= 0 || e.Memory > 1) {
			return errors.New("efficiency: compute and memory must be in (0, 1]")
		}
		if m.Latency != nil && m.Latency.StepOverheadMs < 0 {
			return errors.New("latency: step_overhead_ms must not be negative")
		}
		cfg := f.SchedConfig(m)
		if err := cfg.Validate(); err != nil {
			return err
		}
		return nil
	case "":
		return errors.New("missing engine (instant, fixed_rate or scheduler)")
	}
	return fmt.Errorf("unknown engine %q (instant, fixed_rate or scheduler)", m.Engine)
}

// SchedConfig derives the scheduler core's configuration of a validated
// scheduler model.
func (f *ModelsFile) SchedConfig(m *ModelSpec) sched.Config {
	hw := f.Hardware[m.Hardware]
	kv := m.KVCache
	shape := sched.ModelShape{
		ParamsBillions: m.Weights.ParametersBillions, BytesPerParameter: m.Weights.BytesPerParameter,
		TensorParallel: max(m.TensorParallel, 1),
	}
	if kv.BytesPerToken > 0 {
		shape.GlobalKVBytesPerToken = kv.BytesPerToken
	} else {
		perLayer := 2 * float64(kv.KVHeads*kv.HeadDim) * kv.BytesPerElement
		if kv.SlidingWindow > 0 {
			shape.GlobalKVBytesPerToken = perLayer * float64(kv.GlobalLayers)
			shape.LocalKVBytesPerToken = perLayer * float64(kv.Layers-kv.GlobalLayers)
			shape.Window = kv.SlidingWindow
		} else {
			shape.GlobalKVBytesPerToken = perLayer * float64(kv.Layers)
		}
	}
	block := kv.BlockSize
	if block == 0 {
		block = 16
	}
	util := kv.GPUMemoryUtilization
	if util == 0 {
		util = 0.9
	}
	ce, me := 1.0, 1.0
	if m.Efficiency != nil {
		ce, me = m.Efficiency.Compute, m.Efficiency.Memory
	}
	overhead := 0.0
	if m.Latency != nil {
		overhead = m.Latency.StepOverheadMs / 1000
	}
	shw := sched.Hardware{HBMGiB: hw.HBMGiB, BandwidthGBps: hw.MemoryBandwidthGBps, PeakTFLOPS: hw.PeakTFLOPS}
	return sched.Config{
		NumBlocks:           sched.KVBlocks(shw, shape, util, block),
		BlockSize:           block,
		MaxNumBatchedTokens: m.Scheduler.MaxNumBatchedTokens,
		MaxNumSeqs:          m.Scheduler.MaxNumSeqs,
		Watermark:           kv.Watermark,
		PrefixCaching:       m.PrefixCaching == nil || *m.PrefixCaching,
		Costs:               sched.NewCosts(shw, shape, ce, me, overhead),
	}
}

// fixedRate builds the fixed_rate engine of a validated model.
func fixedRate(m *ModelSpec) *FixedRate {
	return &FixedRate{
		Overhead:      time.Duration(m.FixedRate.OverheadMs * float64(time.Millisecond)),
		PrefillPerSec: m.FixedRate.PrefillTokensPerSecond,
		DecodePerSec:  m.FixedRate.DecodeTokensPerSecond,
	}
}

// decodeStrict decodes YAML, rejecting unknown keys.
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("file is empty")
		}
		return err
	}
	return nil
}
