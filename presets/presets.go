// Package presets holds data: GPU profiles, model shapes and sweep ranges
// that seed knee sim and knee sweep. The numbers only seed simulations and
// sensible sweep ranges; a sweep of the real server measures the truth.
package presets

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

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
	{Name: "l40s", Hardware: "l40s", Model: "gemma-3-12b", Rates: []float64{0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.5}, SLOMillis: 300, Note: "voice calls on a 48 GB L40S: a dozen warm calls"},
	{Name: "a100-80gb", Hardware: "a100-80gb", Model: "gemma-3-12b", Rates: []float64{0.25, 0.5, 0.75, 1, 1.5, 2, 3}, SLOMillis: 300, Note: "voice calls on an 80 GB A100"},
	{Name: "h100-80gb", Hardware: "h100-80gb", Model: "gemma-3-12b", Rates: []float64{0.25, 0.5, 1, 1.5, 2, 3, 4, 6}, SLOMillis: 300, Note: "voice calls on an 80 GB H100: 35–40 warm calls and faster prefill"},
	{Name: "h200", Hardware: "h200", Model: "gemma-3-12b", Rates: []float64{0.5, 1, 2, 3, 4, 6, 8}, SLOMillis: 300, Note: "voice calls on a 141 GB H200"},
}

// HardwareNamed looks a GPU preset up by name.
func HardwareNamed(name string) (Hardware, bool) {
	return find(hardware, name, func(h Hardware) string { return h.Name })
}

// ModelNamed looks a model preset up by name or by an older alias.
func ModelNamed(name string) (Model, bool) {
	for _, m := range models {
		if m.Name == name || slices.Contains(m.Aliases, name) {
			return m, true
		}
	}
	return Model{}, false
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
	switch {
	case h.Name == "" || h.Family == "" || h.HBMGiB <= 0 || h.BandwidthGBps <= 0 || h.PeakTFLOPS <= 0:
		return fmt.Errorf("hardware %q: name, family, memory, bandwidth and TFLOPS must be set", h.Name)
	case h.PeakTFLOPS8 < 0 || h.InterconnectGBps <= 0 || h.InterconnectLatencyUs < 0:
		return fmt.Errorf("hardware %q: interconnect bandwidth must be positive, fp8 TFLOPS and latency not negative", h.Name)
	case h.Tuning.ComputeEff <= 0 || h.Tuning.ComputeEff > 1 || h.Tuning.MemoryEff <= 0 || h.Tuning.MemoryEff > 1 ||
		h.Tuning.StepOverheadMs < 0 || h.Tuning.SeqOverheadMs < 0:
		return fmt.Errorf("hardware %q: efficiencies must be in (0, 1] and overheads not negative", h.Name)
	}
	return nil
}

// Validate checks a model shape.
func (m Model) Validate() error {
	switch {
	case m.Name == "" || m.ParamsBillions <= 0:
		return fmt.Errorf("model %q: name and parameters must be set", m.Name)
	case m.Layers <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 || m.HiddenSize <= 0 || m.AttentionHeads < m.KVHeads:
		return fmt.Errorf("model %q: layers, hidden size, heads and head dimension must be positive, with no fewer attention heads than KV heads", m.Name)
	case m.Experts < 0 || (m.Experts > 0 && (m.ExpertsPerToken < 1 || m.ExpertsPerToken > m.Experts ||
		m.ExpertParamsBillions <= 0 || m.ExpertParamsBillions >= m.ParamsBillions)):
		return fmt.Errorf("model %q: experts need 1 ≤ experts per token ≤ experts and expert parameters below the total", m.Name)
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

// Spec is a preset served on a number of GPUs at a number format:
// GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]].
type Spec struct {
	Hardware Hardware
	GPUs     int
	Model    Model
	Weights  DType
	KV       DType
}

// String writes the spec back in its canonical form.
func (s Spec) String() string {
	out := fmt.Sprintf("%sx%d/%s@%s", s.Hardware.Name, s.GPUs, s.Model.Name, s.Weights.Name)
	if s.KV.Name != "bf16" {
		out += ",kv=" + s.KV.Name
	}
	return out
}

// ParseSpec reads GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]], for example
// h100-80gbx2/llama-3.1-70b@fp8,kv=fp8. N defaults to the model's
// tensor-parallel degree, the weights to bf16 and the KV cache to bf16.
func ParseSpec(text string) (Spec, error) {
	gpuPart, modelPart, ok := SplitCombined(text)
	if !ok || gpuPart == "" || modelPart == "" {
		return Spec{}, fmt.Errorf("preset %q: want GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]], e.g. h100-80gbx2/llama-3.1-70b@fp8 (see knee presets)", text)
	}
	var s Spec
	hw, ok := HardwareNamed(gpuPart)
	if !ok {
		if i := strings.LastIndexByte(gpuPart, 'x'); i > 0 {
			if n, err := strconv.Atoi(gpuPart[i+1:]); err == nil {
				if hw, ok = HardwareNamed(gpuPart[:i]); ok {
					if n < 1 || n > 64 {
						return Spec{}, fmt.Errorf("preset %q: the GPU count must be 1 to 64", text)
					}
					s.GPUs = n
				}
			}
		}
	}
	if !ok {
		return Spec{}, fmt.Errorf("preset %q: unknown GPU %q (GPUs: %s)", text, gpuPart, names(AllHardware(), func(h Hardware) string { return h.Name }))
	}
	s.Hardware = hw
	modelName, formats, _ := strings.Cut(modelPart, "@")
	m, ok := ModelNamed(modelName)
	if !ok {
		return Spec{}, fmt.Errorf("preset %q: unknown model %q (models: %s)", text, modelName, names(AllModels(), func(m Model) string { return m.Name }))
	}
	s.Model = m
	if s.GPUs == 0 {
		s.GPUs = m.TensorParallel
	}
	s.Weights, _ = DTypeNamed("bf16")
	s.KV = s.Weights
	if formats != "" {
		weights, kv, hasKV := strings.Cut(formats, ",")
		d, ok := DTypeNamed(weights)
		if !ok {
			return Spec{}, fmt.Errorf("preset %q: unknown weight format %q (%s)", text, weights, names(dtypes, func(d DType) string { return d.Name }))
		}
		s.Weights = d
		if hasKV {
			name, found := strings.CutPrefix(kv, "kv=")
			d, ok := DTypeNamed(name)
			if !found || !ok || d.Bytes < 1 {
				return Spec{}, fmt.Errorf("preset %q: the KV cache format is given as kv=bf16, kv=fp16 or kv=fp8, got %q", text, kv)
			}
			s.KV = d
		}
	}
	return s, nil
}

func names[T any](l []T, key func(T) string) string {
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = key(x)
	}
	return strings.Join(out, ", ")
}
