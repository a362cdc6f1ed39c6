// Package presets holds data: GPU profiles, model shapes and sweep ranges
// that seed knee sim and knee sweep. The numbers only seed simulations and
// sensible sweep ranges; a sweep of the real server measures the truth.
package presets

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Hardware is one GPU from its vendor data sheet.
type Hardware struct {
	Name string
	// HBMGiB is device memory as the data sheet gives it.
	HBMGiB float64
	// BandwidthGBps is peak memory bandwidth.
	BandwidthGBps float64
	// PeakTFLOPS is dense (not sparse) BF16 tensor throughput.
	PeakTFLOPS float64
	Source     string
}

// Hardware profiles, from each vendor's data sheet (dense BF16 figures; the
// sheets often headline the 2× sparse number).
var hardware = []Hardware{
	// NVIDIA L40S data sheet: 48 GB GDDR6, 864 GB/s, BF16 362.05 TFLOPS dense (733 sparse).
	{Name: "l40s", HBMGiB: 48, BandwidthGBps: 864, PeakTFLOPS: 362, Source: "NVIDIA L40S data sheet"},
	// NVIDIA A100 80GB SXM: 2,039 GB/s, BF16 312 TFLOPS dense.
	{Name: "a100-80gb", HBMGiB: 80, BandwidthGBps: 2039, PeakTFLOPS: 312, Source: "NVIDIA A100 data sheet (SXM)"},
	// NVIDIA H100 SXM: 80 GB HBM3, 3.35 TB/s, BF16 989 TFLOPS dense (1,979 sparse).
	{Name: "h100-80gb", HBMGiB: 80, BandwidthGBps: 3350, PeakTFLOPS: 989, Source: "NVIDIA H100 data sheet (SXM)"},
	// NVIDIA H200 SXM: 141 GB HBM3e, 4.8 TB/s, BF16 989 TFLOPS dense.
	{Name: "h200", HBMGiB: 141, BandwidthGBps: 4800, PeakTFLOPS: 989, Source: "NVIDIA H200 data sheet (SXM)"},
	// NVIDIA HGX B200, per GPU: 180 GB HBM3e, 7.7 TB/s, BF16 2.25 PFLOPS dense (4.5 sparse).
	{Name: "b200", HBMGiB: 180, BandwidthGBps: 7700, PeakTFLOPS: 2250, Source: "NVIDIA HGX B200 data sheet (per GPU)"},
	// AMD Instinct MI300X: 192 GB HBM3, 5.3 TB/s, BF16 1,307.4 TFLOPS dense.
	{Name: "mi300x", HBMGiB: 192, BandwidthGBps: 5300, PeakTFLOPS: 1307, Source: "AMD Instinct MI300X data sheet"},
}

// Model is the shape of a model: what its weights and KV cache cost.
type Model struct {
	Name              string
	ParamsBillions    float64
	BytesPerParameter float64
	Layers            int
	KVHeads           int
	HeadDim           int
	// SlidingWindow > 0 marks hybrid attention: only GlobalLayers hold
	// every token, the others at most SlidingWindow.
	SlidingWindow  int
	GlobalLayers   int
	TensorParallel int
	ContextLength  int
	Source         string
}

// KVBytesPerToken is the full-attention KV footprint per token (K and V,
// bf16) of the layers that hold every token.
func (m Model) KVBytesPerToken() float64 {
	layers := m.Layers
	if m.SlidingWindow > 0 {
		layers = m.GlobalLayers
	}
	return 2 * float64(layers*m.KVHeads*m.HeadDim) * 2
}

var models = []Model{
	// Llama 3.1 8B config.json: 32 layers, 8 KV heads, head dim 128; 8.03 B parameters.
	{Name: "llama-3.1-8b", ParamsBillions: 8.03, BytesPerParameter: 2, Layers: 32, KVHeads: 8, HeadDim: 128, TensorParallel: 1, ContextLength: 131072, Source: "meta-llama/Llama-3.1-8B config"},
	// Llama 3.1 70B: 80 layers, 8 KV heads, head dim 128; 70.6 B parameters, served on 4 GPUs.
	{Name: "llama-3.1-70b", ParamsBillions: 70.6, BytesPerParameter: 2, Layers: 80, KVHeads: 8, HeadDim: 128, TensorParallel: 4, ContextLength: 131072, Source: "meta-llama/Llama-3.1-70B config"},
	// Qwen2.5 7B: 28 layers, 4 KV heads, head dim 128; 7.62 B parameters.
	{Name: "qwen2.5-7b", ParamsBillions: 7.62, BytesPerParameter: 2, Layers: 28, KVHeads: 4, HeadDim: 128, TensorParallel: 1, ContextLength: 32768, Source: "Qwen/Qwen2.5-7B config"},
	// A Gemma-style 12 B with hybrid attention: 48 layers, one in six global,
	// the rest on 1,024-token sliding windows; 8 KV heads of dimension 256.
	{Name: "gemma-12b-hybrid", ParamsBillions: 12.2, BytesPerParameter: 2, Layers: 48, KVHeads: 8, HeadDim: 256, SlidingWindow: 1024, GlobalLayers: 8, TensorParallel: 1, ContextLength: 131072, Source: "Gemma 3 12B-style config"},
}

// Sweep seeds a voice-workload sweep for one GPU: a range of call rates
// around where its knee is expected, and an SLO.
type Sweep struct {
	Name      string
	Hardware  string
	Model     string
	Rates     []float64
	SLOMillis float64
	Note      string
}

var sweeps = []Sweep{
	// ~24 GB of weights leave ~19 GB for KV on an L40S: at ~1.5 GB per
	// 18,000-token call, about a dozen warm calls.
	{Name: "l40s", Hardware: "l40s", Model: "gemma-12b-hybrid", Rates: []float64{0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.5}, SLOMillis: 300, Note: "voice calls on a 48 GB L40S: a dozen warm calls"},
	{Name: "a100-80gb", Hardware: "a100-80gb", Model: "gemma-12b-hybrid", Rates: []float64{0.25, 0.5, 0.75, 1, 1.5, 2, 3}, SLOMillis: 300, Note: "voice calls on an 80 GB A100"},
	{Name: "h100-80gb", Hardware: "h100-80gb", Model: "gemma-12b-hybrid", Rates: []float64{0.25, 0.5, 1, 1.5, 2, 3, 4, 6}, SLOMillis: 300, Note: "voice calls on an 80 GB H100: 35–40 warm calls and faster prefill"},
	{Name: "h200", Hardware: "h200", Model: "gemma-12b-hybrid", Rates: []float64{0.5, 1, 2, 3, 4, 6, 8}, SLOMillis: 300, Note: "voice calls on a 141 GB H200"},
}

// HardwareNamed looks a GPU preset up by name.
func HardwareNamed(name string) (Hardware, bool) {
	return find(hardware, name, func(h Hardware) string { return h.Name })
}

// ModelNamed looks a model preset up by name.
func ModelNamed(name string) (Model, bool) {
	return find(models, name, func(m Model) string { return m.Name })
}

// SweepNamed looks a sweep preset up by name.
func SweepNamed(name string) (Sweep, bool) {
	return find(sweeps, name, func(s Sweep) string { return s.Name })
}

func find[T any](l []T, name string, key func(T) string) (T, bool) {
	for _, x := range l {
		if key(x) == name {
			return x, true
		}
	}
	var zero T
	return zero, false
}

// AllHardware lists the GPU presets by name.
func AllHardware() []Hardware { return sorted(hardware, func(h Hardware) string { return h.Name }) }

// AllModels lists the model presets by name.
func AllModels() []Model { return sorted(models, func(m Model) string { return m.Name }) }

// AllSweeps lists the sweep presets by name.
func AllSweeps() []Sweep { return sorted(sweeps, func(s Sweep) string { return s.Name }) }

func sorted[T any](l []T, key func(T) string) []T {
	out := append([]T(nil), l...)
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// Validate checks a hardware profile.
func (h Hardware) Validate() error {
	if h.Name == "" || h.HBMGiB <= 0 || h.BandwidthGBps <= 0 || h.PeakTFLOPS <= 0 {
		return fmt.Errorf("hardware %q: name, memory, bandwidth and TFLOPS must be set", h.Name)
	}
	return nil
}

// Validate checks a model shape.
func (m Model) Validate() error {
	switch {
	case m.Name == "" || m.ParamsBillions <= 0 || m.BytesPerParameter <= 0:
		return fmt.Errorf("model %q: name, parameters and bytes per parameter must be set", m.Name)
	case m.Layers <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0:
		return fmt.Errorf("model %q: layers, KV heads and head dimension must be positive", m.Name)
	case m.SlidingWindow < 0 || (m.SlidingWindow > 0 && (m.GlobalLayers <= 0 || m.GlobalLayers > m.Layers)):
		return fmt.Errorf("model %q: a sliding window needs 0 < global layers ≤ layers", m.Name)
	case m.TensorParallel < 1 || m.ContextLength < 1:
		return fmt.Errorf("model %q: tensor parallel and context length must be positive", m.Name)
	}
	return nil
}

// Validate checks a sweep preset against the other presets.
func (s Sweep) Validate() error {
	if _, ok := HardwareNamed(s.Hardware); !ok {
		return fmt.Errorf("sweep %q: unknown hardware %q", s.Name, s.Hardware)
	}
	if _, ok := ModelNamed(s.Model); !ok {
		return fmt.Errorf("sweep %q: unknown model %q", s.Name, s.Model)
	}
	if len(s.Rates) == 0 || s.SLOMillis <= 0 {
		return fmt.Errorf("sweep %q: rates and an SLO are required", s.Name)
	}
	for i, r := range s.Rates {
		if r <= 0 || (i > 0 && r <= s.Rates[i-1]) {
			return fmt.Errorf("sweep %q: rates must be positive and increasing", s.Name)
		}
	}
	return nil
}

// ValidateAll checks every preset.
func ValidateAll() error {
	var errs []error
	for _, h := range hardware {
		errs = append(errs, h.Validate())
	}
	for _, m := range models {
		errs = append(errs, m.Validate())
	}
	for _, s := range sweeps {
		errs = append(errs, s.Validate())
	}
	return errors.Join(errs...)
}

// SplitCombined splits "gpu/model" (or "gpu+model") into its parts.
func SplitCombined(name string) (gpu, model string, ok bool) {
	for _, sep := range []string{"/", "+"} {
		if a, b, found := strings.Cut(name, sep); found {
			return a, b, true
		}
	}
	return name, "", false
}
