package predict

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/model"
	"github.com/kneebench/knee/workload/kind"
	"go.yaml.in/yaml/v3"
)

// CandidateSpec is the configurations a plan searches, as knee plan's
// flags give them; its errors name those flags.
type CandidateSpec struct {
	// GPUs, Models and TPs are --gpus, --models and --tp: comma-separated
	// GPU presets (GPUxN fixes the tensor-parallel size), model presets
	// (MODEL[@DTYPE]) and sizes ("auto": the smallest power of two the
	// model fits, and twice it).
	GPUs, Models, TPs string
	// FindMax finds the largest load of a fleet of GPUxN instead.
	FindMax bool
	// Calibrated, when set, is a fitted models file (read from the path
	// CalibratedName) whose models are the candidates.
	Calibrated     *model.ModelsFile
	CalibratedName string
	// Responder says what the simulated server answers.
	Responder *content.Responder
	// Reasoning and Tools, when set, make every candidate's model think
	// before it answers and call the tools requests offer, as a models
	// file's reasoning and tools do.
	Reasoning *model.ReasoningSpec
	Tools     *model.ToolSpec
	// Vision, when set, makes every candidate's model a vision-language
	// model of that rule (its images' tokens and encoder work).
	Vision *model.VisionSpec
	// Policy, when set, is every candidate's scheduling policy (fcfs or
	// priority), and LoRA the adapters every candidate serves.
	Policy string
	LoRA   *model.LoRASpec
	// LongPrefill, when above 0, is every candidate's
	// long_prefill_token_threshold (vLLM's --long-prefill-token-threshold).
	LongPrefill int
	// SchedulesAs, when set, is whose rules every candidate schedules by
	// (model.Engines' names); several, comma-separated, plan every
	// configuration under each, to compare the engines.
	SchedulesAs string
	// Endpoint is the kind of request planned for: a pooling kind's
	// (embeddings) every candidate's model serves as an encoder of its
	// architecture.
	Endpoint kind.Name
	// GEMMTiles gives every preset candidate whose GPU family has a fitted
	// kernel table its matrix products by shape (model's ShapeProducts).
	GEMMTiles bool
}

// behave gives a candidate's models the spec's reasoning, tools and
// vision.
func (o CandidateSpec) behave(models *model.ModelsFile) {
	for i := range models.Models {
		if o.Reasoning != nil {
			models.Models[i].Reasoning = o.Reasoning
		}
		if o.Tools != nil {
			models.Models[i].Tools = o.Tools
		}
		if o.Vision != nil {
			v := *o.Vision
			models.Models[i].Vision = &v
		}
		if o.Policy != "" {
			models.Models[i].SchedulingPolicy = o.Policy
		}
		if o.LongPrefill > 0 {
			models.Models[i].LongPrefillTokenThreshold = o.LongPrefill
		}
		if o.SchedulesAs != "" {
			models.Models[i].SchedulesAs = o.SchedulesAs
		}
		if o.LoRA != nil {
			l := *o.LoRA
			models.Models[i].LoRA = &l
		}
		if o.Endpoint.Kind().Pooled() && models.Models[i].Pooling == nil {
			models.Models[i].Pooling = &model.PoolingSpec{Dimension: DefaultPoolingDimension}
		}
	}
}

// Candidates are the configurations to search: the fitted models file's,
// or every GPU, model and tensor-parallel size given. A model that fits
// no GPU given is listed, unfit, with why.
func (o CandidateSpec) Candidates() ([]*Candidate, error) {
	engines := SplitList(o.SchedulesAs)
	if len(engines) < 2 {
		return o.candidates()
	}
	var out []*Candidate
	for _, e := range engines {
		one := o
		one.SchedulesAs = e
		cands, err := one.candidates()
		if err != nil {
			return nil, err
		}
		for _, c := range cands {
			c.Name += " · " + e
		}
		out = append(out, cands...)
	}
	return out, nil
}

// candidates are Candidates under one engine's rules.
func (o CandidateSpec) candidates() ([]*Candidate, error) {
	if o.Calibrated != nil {
		return o.calibrated()
	}
	var out []*Candidate
	for _, g := range SplitList(o.GPUs) {
		name, n := g, 0
		if _, ok := presets.HardwareNamed(g); !ok {
			if i := strings.LastIndexByte(g, 'x'); i > 0 {
				v, err := strconv.Atoi(g[i+1:])
				switch _, known := presets.HardwareNamed(g[:i]); {
				case err == nil && v >= 1 && v <= 64:
					name, n = g[:i], v
				case known:
					return nil, fmt.Errorf("--gpus %s: %q is no count of GPUs (GPUxN: N from 1 to 64)", g, g[i+1:])
				}
			}
		}
		if _, ok := presets.HardwareNamed(name); !ok {
			return nil, fmt.Errorf("--gpus: unknown GPU %q (see knee presets)", g)
		}
		if o.FindMax && n == 0 {
			n = 8
		}
		for _, m := range SplitList(o.Models) {
			cands, err := o.ofModel(g, name, n, m)
			if err != nil {
				return nil, err
			}
			out = append(out, cands...)
		}
	}
	return out, nil
}

// calibrated is the candidates of a fitted models file.
func (o CandidateSpec) calibrated() ([]*Candidate, error) {
	models := o.Calibrated
	o.behave(models)
	var out []*Candidate
	for _, m := range models.Models {
		if m.Engine != "scheduler" {
			continue
		}
		t := Target{Models: models, Model: m.Name, Responder: o.Responder, Endpoint: o.Endpoint}
		out = append(out, &Candidate{Name: o.CalibratedName + ":" + m.Name, GPU: m.Hardware, Model: m.Name, TP: max(m.TensorParallel, 1),
			Target: t, Budget: max(m.TensorParallel, 1), Calibration: results.CalibrationMeasured})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--calibrated %s serves no model on the scheduler engine", o.CalibratedName)
	}
	return out, nil
}

// ofModel is the candidates of model m on GPU name (given as g), n of
// them when fixed.
func (o CandidateSpec) ofModel(g, name string, n int, m string) ([]*Candidate, error) {
	modelName, formats, _ := strings.Cut(m, "@")
	if _, ok := presets.ModelNamed(modelName); !ok {
		return nil, fmt.Errorf("--models: unknown model %q (see knee presets)", modelName)
	}
	tps, err := o.tpList(n)
	if err != nil {
		return nil, err
	}
	var fits []*Candidate
	var lastErr error
	for _, tp := range tps {
		if o.TPs == "auto" && !o.FindMax && len(fits) == 2 {
			// The smallest tensor-parallel size that fits, and twice it
			// (lower latency for more GPUs): larger ones only when asked.
			break
		}
		spec := fmt.Sprintf("%sx%d/%s", name, tp, m)
		if formats == "" {
			spec += "@bf16"
		}
		models, err := model.ModelsOfPreset(spec)
		if err != nil {
			lastErr = err
			continue
		}
		o.behave(models)
		label := canonical(spec)
		if o.GEMMTiles && models.ShapeProducts() {
			label += gemmSuffix
		}
		t := Target{Models: models, Model: models.Models[0].Name, Responder: o.Responder, Endpoint: o.Endpoint}
		fits = append(fits, &Candidate{Name: label, GPU: name, Model: m, TP: tp, Target: t, Budget: n, Calibration: calibrationOf(name)})
	}
	if len(fits) == 0 {
		why := "does not fit"
		if lastErr != nil {
			why = lastErr.Error()
		}
		return []*Candidate{{Name: fmt.Sprintf("%s/%s", g, m), GPU: name, Model: m, Unfit: why}}, nil
	}
	return fits, nil
}

// tpList is the tensor-parallel sizes to try: --tp, or powers of two up
// to 16; finding the largest load of a budget of n GPUs, those dividing
// it; a GPU given as GPUxN plans with N alone.
func (o CandidateSpec) tpList(n int) ([]int, error) {
	if n > 0 && !o.FindMax {
		return []int{n}, nil
	}
	var tps []int
	if o.TPs == "auto" {
		tps = []int{1, 2, 4, 8, 16}
	} else {
		for _, s := range SplitList(o.TPs) {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 || v > 64 {
				return nil, fmt.Errorf("--tp: %q is not a GPU count from 1 to 64", s)
			}
			tps = append(tps, v)
		}
	}
	if !o.FindMax {
		return tps, nil
	}
	var out []int
	for _, tp := range tps {
		if tp <= n && n%tp == 0 {
			out = append(out, tp)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--tp: none of %v divides the fleet's %d GPUs", tps, n)
	}
	return out, nil
}

// canonical writes a preset as presets.ParseSpec reads it back.
func canonical(spec string) string {
	if s, err := presets.ParseSpec(spec); err == nil {
		return s.String()
	}
	return spec
}

// PricesReadError is a prices file that could not be read (as opposed to
// one read that holds no prices).
type PricesReadError struct{ Err error }

func (e *PricesReadError) Error() string { return e.Err.Error() }
func (e *PricesReadError) Unwrap() error { return e.Err }

// SplitList splits a comma-separated list, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// PriceTable is the prices per GPU-hour of path (a YAML or JSON map of GPU
// name to dollars), or with no path the example prices, and whose they
// are: at most 1 MiB (a price list of every GPU there is is a few KiB).
// An error reading the file is a *PricesReadError; cancelling ctx ends a
// wait on a FIFO.
func PriceTable(ctx context.Context, path string) (map[string]float64, string, error) {
	if path == "" {
		return presets.ExamplePrices, presets.ExamplePriceSource, nil
	}
	b, err := input.Read(ctx, path, 1<<20, "a prices file")
	if err != nil {
		return nil, "", &PricesReadError{fmt.Errorf("--prices: %w", err)}
	}
	var m map[string]float64
	if err := yaml.Unmarshal(b, &m); err != nil || len(m) == 0 {
		return nil, "", fmt.Errorf("--prices %s: want a map of GPU name to dollars per GPU-hour, e.g. h100-80gb: 2.5", path)
	}
	for k, v := range m {
		if !(v > 0) || v > 1e6 {
			return nil, "", fmt.Errorf("--prices %s: %s costs %v an hour: not a price", path, k, v)
		}
	}
	return m, "prices per GPU-hour from " + path, nil
}

// PricesCover checks that a prices file (path) prices every GPU the
// plan may choose: a GPU it leaves out cannot be ranked by cost, and a
// misspelt key (h100 for h100-80gb) once left the H100 unpriced and made
// the L40S the "cheapest" answer. The error names what the file prices.
func PricesCover(prices map[string]float64, path string, cands []*Candidate) error {
	for _, c := range cands {
		if _, ok := prices[c.GPU]; ok || c.GPU == "" {
			continue
		}
		keys := slices.Sorted(maps.Keys(prices))
		hint := ""
		if near := results.Nearest(c.GPU, keys); near != "" {
			hint = fmt.Sprintf(" (is %s it?)", near)
		}
		return fmt.Errorf("--prices %s has no price for %s%s, so no plan can rank it by cost: it prices %s; "+
			"name GPUs as knee presets does", path, c.GPU, hint, strings.Join(keys, ", "))
	}
	return nil
}

// calibrationOf is how a GPU preset's cost model was tuned: fitted to
// measurements of its family, or a priori.
func calibrationOf(gpu string) string {
	hw, ok := presets.HardwareNamed(gpu)
	if ok && strings.HasPrefix(hw.Tuning.Source, "fit") {
		return results.CalibrationFitted
	}
	return results.CalibrationApriori
}
