package model

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/sched"
	"go.yaml.in/yaml/v3"
)

// ParseModels parses and validates a models file.
func ParseModels(name string, data []byte) (*ModelsFile, error) {
	var f ModelsFile
	if err := content.DecodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if err := f.expandPresets(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if err := f.servedContexts(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &f, nil
}

// expandPresets replaces every model given as a preset by the preset's
// own spec under the model's name, its GPU added to the hardware.
func (f *ModelsFile) expandPresets() error {
	for i := range f.Models {
		m := &f.Models[i]
		if m.Preset == "" {
			continue
		}
		// A preset is the whole model's serving; its behaviour and its
		// engine's policies may be given beside it (besidePreset).
		given := *m
		rest := given
		copyBeside(&rest, ModelSpec{})
		if !reflect.DeepEqual(rest, ModelSpec{}) {
			return fmt.Errorf("model %q: preset %s is the whole model; give no other field with it than %s", m.Name, m.Preset, besideNames())
		}
		name, preset := m.Name, m.Preset
		spec, err := presets.ParseSpec(preset)
		if err != nil {
			return fmt.Errorf("model %q: %v", name, err)
		}
		p, err := PresetModels(spec)
		if err != nil {
			return fmt.Errorf("model %q: %v", name, err)
		}
		if f.Hardware == nil {
			f.Hardware = map[string]HardwareSpec{}
		}
		for hw, spec := range p.Hardware {
			if have, ok := f.Hardware[hw]; ok && have != spec {
				return fmt.Errorf("model %q: the file's hardware %q is not preset %s's", name, hw, preset)
			}
			f.Hardware[hw] = spec
		}
		*m = p.Models[0]
		copyBeside(m, given)
	}
	return nil
}

// Validate checks every model and reports the first problem, naming it.
func (f *ModelsFile) Validate() error {
	if len(f.Models) == 0 {
		return errors.New("no models")
	}
	for name, hw := range f.Hardware {
		if err := hw.validate(); err != nil {
			return fmt.Errorf("hardware %q: %w", name, err)
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
		if m.LoRA != nil {
			for _, a := range m.LoRA.Adapters {
				if seen[a] {
					return fmt.Errorf("model %q: adapter %q has the name of a model or another adapter", m.Name, a)
				}
				seen[a] = true
			}
		}
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
	if err := validateBehaviours(m); err != nil {
		return err
	}
	if err := CheckRules(m); err != nil {
		return err
	}
	if err := checkMultiStep(m); err != nil {
		return err
	}
	if t := m.LongPrefillTokenThreshold; t < 0 || t > 1<<24 {
		return fmt.Errorf("long_prefill_token_threshold %d: 0 (off) or a token count", t)
	}
	if m.StreamInterval != 0 && m.Engine != EngineScheduler {
		return errors.New("stream_interval: only a scheduler model's tokens are timed by its steps")
	}
	if m.StepTimeCV != 0 && m.Engine != EngineScheduler {
		return errors.New("step_time_cv: only a scheduler model has steps")
	}
	if m.Disaggregated != nil && m.Engine != EngineScheduler {
		return errors.New("disaggregated: only a scheduler model is served disaggregated")
	}
	switch m.Engine {
	case EngineInstant:
		return nil
	case EngineFixedRate:
		fr := m.FixedRate
		if fr == nil {
			return errors.New("engine fixed_rate needs a fixed_rate section")
		}
		return fr.validate()
	case EngineScheduler:
		return f.validateScheduler(m)
	case "":
		return errors.New("missing engine (instant, fixed_rate or scheduler)")
	}
	return fmt.Errorf("unknown engine %q (instant, fixed_rate or scheduler)", m.Engine)
}

// validate bounds the rates so that a token's time stays a duration Go
// can hold: a token at least every 1,000 s, at most a billion a second.
func (fr *FixedRateSpec) validate() error {
	rate := func(v float64) bool { return v >= 1e-3 && v <= 1e9 }
	if !rate(fr.PrefillTokensPerSecond) || !rate(fr.DecodeTokensPerSecond) || !(fr.OverheadMs >= 0 && fr.OverheadMs <= 3.6e6) {
		return fmt.Errorf("fixed_rate: prefill and decode rates from 0.001 to 1e9 tokens a second, overhead from 0 to 3,600,000 ms "+
			"(given %v, %v and %v)", fr.PrefillTokensPerSecond, fr.DecodeTokensPerSecond, fr.OverheadMs)
	}
	return nil
}

// validateBehaviours checks each behaviour section the model has: faults,
// reasoning, tools, pooling, vision and LoRA.
func validateBehaviours(m *ModelSpec) error {
	if m.Faults != nil {
		if err := m.Faults.Validate(); err != nil {
			return fmt.Errorf("faults: %v", err)
		}
	}
	var checks []func() error
	if m.Reasoning != nil {
		checks = append(checks, m.Reasoning.Validate)
	}
	if m.Tools != nil {
		checks = append(checks, m.Tools.Validate)
	}
	if m.Pooling != nil {
		checks = append(checks, m.Pooling.Validate)
	}
	if m.Vision != nil {
		checks = append(checks, m.Vision.Validate)
	}
	if m.LoRA != nil {
		checks = append(checks, m.LoRA.Validate)
		if m.Engine == EngineScheduler {
			checks = append(checks, func() error { _, err := m.LoRA.SchedLoRA(loraShape(m)); return err })
		}
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateScheduler checks a scheduler model's sections: hardware,
// weights, KV cache, scheduler, and the core's configuration they make.
func (f *ModelsFile) validateScheduler(m *ModelSpec) error {
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
	if err := validateWeights(m); err != nil {
		return err
	}
	if err := validateKV(m.KVCache); err != nil {
		return err
	}
	if m.Scheduler.MaxNumBatchedTokens <= 0 || m.Scheduler.MaxNumSeqs <= 0 {
		return errors.New("scheduler: max_num_batched_tokens and max_num_seqs must be positive")
	}
	if m.TensorParallel < 0 {
		return errors.New("tensor_parallel must be positive")
	}
	if e := m.Efficiency; e != nil && !(within(e.Compute, 1e-3, 1) && within(e.Memory, 1e-3, 1)) {
		return errors.New("efficiency: compute and memory from 0.001 to 1")
	}
	if l := m.Latency; l != nil && !(within(l.StepOverheadMs, 0, 1e5) && within(l.PerSequenceOverheadMs, 0, 1e4)) {
		return errors.New("latency: step_overhead_ms from 0 to 100,000 and per_sequence_overhead_ms from 0 to 10,000")
	}
	cfg := f.SchedConfig(m)
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := checkGEMM(m.Hardware, f.Hardware[m.Hardware], cfg); err != nil {
		return err
	}
	if err := checkVocabTerm(m, cfg); err != nil {
		return err
	}
	return f.validateDisagg(m)
}

// validateKV checks the KV cache's shape and its limits.
func validateKV(kv *KVCacheSpec) error {
	if _, ok := kvElementBytes(kv); kv.BytesPerToken <= 0 && (kv.Layers <= 0 || kv.KVHeads <= 0 || kv.HeadDim <= 0 || !ok) {
		return errors.New("kv_cache: give bytes_per_token, or layers, kv_heads, head_dim and bytes_per_element or dtype (bf16, fp16, fp8)")
	}
	if kv.ReserveGiB < 0 {
		return errors.New("kv_cache: reserve_gib must not be negative")
	}
	if kv.Layers > 1<<16 || kv.KVHeads > 1<<16 || kv.HeadDim > 1<<16 || kv.BlockSize > 1<<20 || kv.BytesPerToken > 1<<40 {
		return errors.New("kv_cache: layers, kv_heads and head_dim at most 65,536, block_size at most 1,048,576 tokens")
	}
	if kv.SlidingWindow < 0 || (kv.SlidingWindow > 0 && (kv.Layers <= 0 || kv.GlobalLayers <= 0 || kv.GlobalLayers > kv.Layers)) {
		return errors.New("kv_cache: sliding_window needs layers and 0 < global_layers ≤ layers")
	}
	if kv.BlockSize < 0 || kv.GPUMemoryUtilization < 0 || kv.GPUMemoryUtilization > 1 || kv.Watermark < 0 || kv.Watermark >= 1 {
		return errors.New("kv_cache: block_size must be positive, gpu_memory_utilization in (0, 1], watermark in [0, 1)")
	}
	return nil
}

// SchedConfig derives the scheduler core's configuration of a validated
// scheduler model.
func (f *ModelsFile) SchedConfig(m *ModelSpec) sched.Config {
	hw := f.Hardware[m.Hardware]
	kv := m.KVCache
	shape := modelShape(m)
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
	tuning := sched.Tuning{ComputeEff: ce, MemoryEff: me}
	if m.Latency != nil {
		tuning.StepOverhead = m.Latency.StepOverheadMs / 1000
		tuning.SeqOverhead = m.Latency.PerSequenceOverheadMs / 1000
	}
	tuning.ScheduleOverhead = m.ScheduleOverheadMs / 1000
	shw := sched.Hardware{HBMGiB: hw.HBMGiB, BandwidthGBps: hw.MemoryBandwidthGBps, PeakTFLOPS: hw.PeakTFLOPS,
		PeakTFLOPS8: hw.PeakTFLOPSFP8, InterconnectGBps: hw.InterconnectGBps, InterconnectLatencyUs: hw.InterconnectLatencyUs,
		GEMM: hw.GEMM.tiles()}
	cfg := sched.Config{
		NumBlocks:           sched.KVBlocks(shw, shape, util, kv.ReserveGiB, block),
		BlockSize:           block,
		MaxNumBatchedTokens: m.Scheduler.MaxNumBatchedTokens,
		MaxNumSeqs:          m.Scheduler.MaxNumSeqs,
		Watermark:           kv.Watermark,
		PrefixCaching:       m.PrefixCaching == nil || *m.PrefixCaching,
		Costs:               sched.NewCosts(shw, shape, tuning),
		Policy:              m.SchedulingPolicy,
		// Checked by Validate (sched.Config.Validate).
		LongPrefillThreshold: m.LongPrefillTokenThreshold,
		StreamInterval:       m.StreamInterval,
		SchedulerSteps:       m.NumSchedulerSteps,
		WindowOutputs:        m.MultiStepStreamOutputs != nil && !*m.MultiStepStreamOutputs,
		StepTimeCV:           m.StepTimeCV,
	}

	if m.LoRA != nil {
		// Checked by Validate (loraShape).
		cfg.LoRA, _ = m.LoRA.SchedLoRA(loraShape(m))
	}
	if e, ok := EngineNamed(m.SchedulesAs); ok && e.apply != nil {
		e.apply(&cfg, hw.HBMGiB, m.ContextLength)
	}
	return cfg
}

// modelShape is what the cost model needs of the model: its weights,
// layers, attention, experts and the KV bytes a token holds (in the
// global and the sliding-window layers).
func modelShape(m *ModelSpec) sched.ModelShape {
	kv := m.KVCache
	bytes, eight := weightBytes(m.Weights)
	shape := sched.ModelShape{
		ParamsBillions: m.Weights.ParametersBillions, BytesPerParameter: bytes, EightBitCompute: eight,
		TensorParallel: max(m.TensorParallel, 1),
		Layers:         kv.Layers, HeadDim: kv.HeadDim, GlobalLayers: kv.GlobalLayers, KVHeads: kv.KVHeads,
	}
	if a := m.Architecture; a != nil {
		shape.HiddenSize, shape.AttentionHeads = a.HiddenSize, a.AttentionHeads
		shape.VocabSize, shape.TiedEmbeddings = a.VocabSize, a.TiedEmbeddings
	}
	if e := m.Experts; e != nil {
		shape.Experts, shape.ExpertsPerToken, shape.ExpertParamsBillions = e.Count, e.PerToken, e.ParametersBillions
	}
	if kv.BytesPerToken > 0 {
		shape.GlobalKVBytesPerToken = kv.BytesPerToken
	} else {
		elem, _ := kvElementBytes(kv)
		shape.EightBitAttention = eight && elem <= 1
		perLayer := 2 * float64(kv.KVHeads*kv.HeadDim) * elem
		if kv.SlidingWindow > 0 {
			shape.GlobalKVBytesPerToken = perLayer * float64(kv.GlobalLayers)
			shape.LocalKVBytesPerToken = perLayer * float64(kv.Layers-kv.GlobalLayers)
			shape.Window = kv.SlidingWindow
		} else {
			shape.GlobalKVBytesPerToken = perLayer * float64(kv.Layers)
		}
	}
	return shape
}

// loraShape is the hidden size and layer count an adapter's size is
// drawn from (0 when the file does not say).
func loraShape(m *ModelSpec) (hidden, layers int) {
	if m.Architecture != nil {
		hidden = m.Architecture.HiddenSize
	}
	if m.KVCache != nil {
		layers = m.KVCache.Layers
	}
	return hidden, layers
}

// validateWeights checks the weights, the experts and the architecture of
// a scheduler model.
func validateWeights(m *ModelSpec) error {
	w := m.Weights
	if !within(w.ParametersBillions, 1e-6, 1e5) {
		return errors.New("weights: parameters_billions from 0.000001 (a thousand) to 100,000")
	}
	if w.DType != "" {
		if _, ok := presets.DTypeNamed(w.DType); !ok {
			return fmt.Errorf("weights: unknown dtype %q (bf16, fp16, fp8, int8, int4)", w.DType)
		}
	} else if w.BytesPerParameter <= 0 {
		return errors.New("weights: give bytes_per_parameter or dtype")
	}
	if w.BytesPerParameter < 0 {
		return errors.New("weights: bytes_per_parameter must be positive")
	}
	if e := m.Experts; e != nil && (e.Count < 1 || e.PerToken < 1 || e.PerToken > e.Count ||
		e.ParametersBillions <= 0 || e.ParametersBillions >= w.ParametersBillions) {
		return errors.New("experts: need 1 ≤ per_token ≤ count and 0 < parameters_billions < weights.parameters_billions")
	}
	if a := m.Architecture; a != nil && (a.HiddenSize < 0 || a.HiddenSize > 1<<24 || a.AttentionHeads < 0 || a.AttentionHeads > 1<<16) {
		return errors.New("architecture: hidden_size from 0 to 16,777,216 and attention_heads from 0 to 65,536")
	}
	return checkVocab(m.Architecture)
}

// weightBytes is the bytes per parameter of the weights, and whether they
// compute in 8 bits.
func weightBytes(w *WeightsSpec) (float64, bool) {
	d, ok := presets.DTypeNamed(w.DType)
	if w.BytesPerParameter > 0 {
		return w.BytesPerParameter, ok && d.EightBitCompute
	}
	return d.Bytes, d.EightBitCompute
}

// kvElementBytes is the bytes of one K or V element.
func kvElementBytes(kv *KVCacheSpec) (float64, bool) {
	if kv.BytesPerElement > 0 {
		return kv.BytesPerElement, true
	}
	if kv.DType == "" {
		return 0, false
	}
	d, ok := presets.DTypeNamed(kv.DType)
	return d.Bytes, ok && d.Bytes >= 1
}

// FixedRateOf builds the fixed_rate engine of a validated model.
func FixedRateOf(m *ModelSpec) *FixedRate {
	return &FixedRate{
		Overhead:      time.Duration(m.FixedRate.OverheadMs * float64(time.Millisecond)),
		PrefillPerSec: m.FixedRate.PrefillTokensPerSecond,
		DecodePerSec:  m.FixedRate.DecodeTokensPerSecond,
	}
}

// YAML writes the models file as an editable models.yml, headed by a
// comment naming where it came from.
func (f *ModelsFile) YAML(origin string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# models.yml of %s, as knee sim and knee predict take it.\n# Every number below shapes the simulated timing; edit freely.\n", origin)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
