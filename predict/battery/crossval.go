package battery

import (
	"math"
	"slices"

	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/simulator/sched"
)

// Fold is one source left out: the tuning fitted to the other sources'
// cells, each GPU family on its own, and the left-out cells' results
// under it. A family the other sources never measured keeps the shipped
// tuning.
type Fold struct {
	Source  string
	Tuning  Tuning
	Results []Result
}

// fitParams are the cost model's free parameters a fit moves: those knee
// calibrate fits to one measured sweep.
var fitParams = []predict.Param{
	{Name: "compute_efficiency", Min: 0.2, Max: 1},
	{Name: "memory_efficiency", Min: 0.3, Max: 1},
	{Name: "step_overhead_ms", Min: 0, Max: 20},
	{Name: "per_sequence_overhead_ms", Min: 0, Max: 0.5},
}

func tuningOf(x []float64) sched.Tuning {
	return sched.Tuning{ComputeEff: x[0], MemoryEff: x[1], StepOverhead: x[2] / 1000, SeqOverhead: x[3] / 1000}
}

// Loss is the mean squared log error of every measured figure of the
// results; a cell the core could not run counts as an error of e (a
// factor of 2.7), so a tuning cannot win by leaving cells out.
func Loss(results []Result) float64 {
	sum, n := 0.0, 0
	for _, r := range results {
		for m, v := range r.Cell.Measured {
			e := 1.0
			if r.Err == nil && r.Predicted[m] > 0 {
				e = math.Log(r.Predicted[m] / v)
			}
			sum += e * e
			n++
		}
	}
	return sum / float64(max(n, 1))
}

// FitFamily fits the family's tuning to the cells (all of that family),
// from the shipped tuning, in at most maxEval evaluations of them all.
// Only the first free of fitParams move (4: all; 2: the efficiencies,
// the overheads kept as shipped).
func FitFamily(cells []*Cell, family string, shipped sched.Tuning, free, maxEval, workers int) (sched.Tuning, float64, error) {
	start := []float64{shipped.ComputeEff, shipped.MemoryEff, shipped.StepOverhead * 1000, shipped.SeqOverhead * 1000}
	params := slices.Clone(fitParams[:free])
	for i := range params {
		params[i].Start = start[i]
	}
	at := func(x []float64) sched.Tuning {
		return tuningOf(append(slices.Clone(x), start[len(x):]...))
	}
	fit, err := predict.Fit(params, maxEval, func(x []float64) float64 {
		return Loss(Evaluate(cells, Tuning{family: at(x)}, workers))
	})
	if err != nil {
		return shipped, 0, err
	}
	return at(fit.X), fit.Loss, nil
}

// CrossValidate leaves each source out in turn: the other sources' cells
// fit each family's tuning, which then predicts the left-out cells. Every
// cell is predicted once, by the fold that never saw its source.
func CrossValidate(cells []*Cell, free, maxEval, workers int) ([]Fold, error) {
	var folds []Fold
	for _, src := range sources(cells) {
		fold := Fold{Source: src, Tuning: Tuning{}}
		train := map[string][]*Cell{}
		var test []*Cell
		for _, c := range cells {
			if c.Source == src {
				test = append(test, c)
			} else {
				train[familyOf(c)] = append(train[familyOf(c)], c)
			}
		}
		for family, fc := range train {
			if !needed(test, family) {
				continue
			}
			_, shippedTuning := shipped(fc[0])
			t, _, err := FitFamily(fc, family, shippedTuning, free, maxEval, workers)
			if err != nil {
				return nil, err
			}
			fold.Tuning[family] = t
		}
		fold.Results = Evaluate(test, fold.Tuning, workers)
		folds = append(folds, fold)
	}
	return folds, nil
}

// needed says some left-out cell runs on the family.
func needed(test []*Cell, family string) bool {
	return slices.ContainsFunc(test, func(c *Cell) bool { return familyOf(c) == family })
}

func sources(cells []*Cell) []string {
	var out []string
	for _, c := range cells {
		if !slices.Contains(out, c.Source) {
			out = append(out, c.Source)
		}
	}
	return out
}

func familyOf(c *Cell) string {
	family, _ := shipped(c)
	return family
}

// shipped is the cell's GPU family and that family's shipped tuning.
func shipped(c *Cell) (string, sched.Tuning) {
	cfg, s, err := c.Config()
	if err != nil {
		return "", sched.Tuning{}
	}
	return s.Hardware.Family, cfg.Costs.Tuning
}
