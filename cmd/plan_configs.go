package cmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator"
	"go.yaml.in/yaml/v3"
)

// candidates are the configurations to search: the fitted models file's,
// or every GPU, model and tensor-parallel size given.
func (o *planOptions) candidates() ([]*predict.Candidate, error) {
	responder, err := simulator.LoadResponses(o.sim.responses)
	if err != nil {
		return nil, err
	}
	chat := o.target.endpoint == "chat"
	if o.calibrated != "" {
		models, err := simulator.LoadModels(o.calibrated)
		if err != nil {
			return nil, err
		}
		var out []*predict.Candidate
		for _, m := range models.Models {
			if m.Engine != "scheduler" {
				continue
			}
			t := predict.Target{Models: models, Model: m.Name, Responder: responder, Chat: chat}
			out = append(out, &predict.Candidate{Name: o.calibrated + ":" + m.Name, GPU: m.Hardware, Model: m.Name, TP: max(m.TensorParallel, 1),
				Target: t, Budget: max(m.TensorParallel, 1)})
		}
		if len(out) == 0 {
			return nil, usageErr("--calibrated %s serves no model on the scheduler engine", o.calibrated)
		}
		return out, nil
	}
	var out []*predict.Candidate
	for _, g := range splitList(o.gpus) {
		name, n := g, 0
		if _, ok := presets.HardwareNamed(g); !ok {
			if i := strings.LastIndexByte(g, 'x'); i > 0 {
				if v, err := strconv.Atoi(g[i+1:]); err == nil && v >= 1 && v <= 64 {
					name, n = g[:i], v
				}
			}
		}
		if _, ok := presets.HardwareNamed(name); !ok {
			return nil, usageErr("--gpus: unknown GPU %q (see knee presets)", g)
		}
		if o.findMax && n == 0 {
			n = 8
		}
		for _, m := range splitList(o.models) {
			modelName, formats, _ := strings.Cut(m, "@")
			if _, ok := presets.ModelNamed(modelName); !ok {
				return nil, usageErr("--models: unknown model %q (see knee presets)", modelName)
			}
			tps, err := o.tpList(n)
			if err != nil {
				return nil, err
			}
			var fits []*predict.Candidate
			var lastErr error
			for _, tp := range tps {
				if o.tps == "auto" && !o.findMax && len(fits) == 2 {
					// The smallest tensor-parallel size that fits, and
					// twice it (lower latency for more GPUs): larger ones
					// only when asked.
					break
				}
				spec := fmt.Sprintf("%sx%d/%s", name, tp, m)
				if formats == "" {
					spec += "@bf16"
				}
				models, err := simulator.PresetModels(spec)
				if err != nil {
					lastErr = err
					continue
				}
				t := predict.Target{Models: models, Model: models.Models[0].Name, Responder: responder, Chat: chat}
				fits = append(fits, &predict.Candidate{Name: canonical(spec), GPU: name, Model: m, TP: tp, Target: t, Budget: n})
			}
			if len(fits) == 0 {
				why := "does not fit"
				if lastErr != nil {
					why = lastErr.Error()
				}
				out = append(out, &predict.Candidate{Name: fmt.Sprintf("%s/%s", g, m), GPU: name, Model: m, Unfit: why})
			}
			out = append(out, fits...)
		}
	}
	return out, nil
}

// tpList is the tensor-parallel sizes to try: --tp, or powers of two up
// to 8; finding the largest load of a budget of n GPUs, those dividing it;
// a GPU given as GPUxN plans with N alone.
func (o *planOptions) tpList(n int) ([]int, error) {
	if n > 0 && !o.findMax {
		return []int{n}, nil
	}
	var tps []int
	if o.tps == "auto" {
		tps = []int{1, 2, 4, 8, 16}
	} else {
		for _, s := range splitList(o.tps) {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 || v > 64 {
				return nil, usageErr("--tp: %q is not a GPU count from 1 to 64", s)
			}
			tps = append(tps, v)
		}
	}
	if !o.findMax {
		return tps, nil
	}
	var out []int
	for _, tp := range tps {
		if tp <= n && n%tp == 0 {
			out = append(out, tp)
		}
	}
	if len(out) == 0 {
		return nil, usageErr("--tp: none of %v divides the fleet's %d GPUs", tps, n)
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

// priceTable is --prices, or the example prices, and whose they are.
func (o *planOptions) priceTable() (map[string]float64, string, error) {
	if o.prices == "" {
		return presets.ExamplePrices, presets.ExamplePriceSource, nil
	}
	b, err := os.ReadFile(o.prices)
	if err != nil {
		return nil, "", withCode(ExitRuntime, fmt.Errorf("--prices: %w", err))
	}
	var m map[string]float64
	if err := yaml.Unmarshal(b, &m); err != nil || len(m) == 0 {
		return nil, "", usageErr("--prices %s: want a map of GPU name to dollars per GPU-hour, e.g. h100-80gb: 2.5", o.prices)
	}
	for k, v := range m {
		if !(v > 0) || v > 1e6 {
			return nil, "", usageErr("--prices %s: %s costs %v an hour: not a price", o.prices, k, v)
		}
	}
	return m, "prices per GPU-hour from " + o.prices, nil
}

// outputs names the plan's files in --out-dir and checks them.
func (o *planOptions) outputs() (label, jsonPath, csvPath string, err error) {
	f := &sweepFlags{label: o.label, outDir: o.outDir, load: o.load}
	label, p, err := f.sweepOutputs("plan", nil)
	return label, p.json, p.csv, err
}

// splitList splits a comma-separated flag, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// num writes a load in its shortest form.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
