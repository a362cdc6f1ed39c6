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
// results, each source's figures weighed as one: a source of 200 figures
// (a sweep of one model) must not outvote one of six (the anchors, which
// alone time a step's fixed cost apart from its bytes). A cell the core
// could not run counts as an error of e (a factor of 2.7), so a tuning
// cannot win by leaving cells out.
func Loss(results []Result) float64 {
	type acc struct {
		sum float64
		n   int
	}
	// The sources in the order they come, so the sum is the same sum
	// every time (a fit compares losses to the last bit).
	var order []*acc
	bySource := map[string]*acc{}
	for _, r := range results {
		a := bySource[r.Cell.Source]
		if a == nil {
			a = &acc{}
			bySource[r.Cell.Source] = a
			order = append(order, a)
		}
		for _, m := range Metrics {
			v, ok := r.Cell.Measured[m]
			if !ok {
				continue
			}
			e := 1.0
			if r.Err == nil && r.Predicted[m] > 0 {
				e = math.Log(r.Predicted[m] / v)
			}
			a.sum += e * e
			a.n++
		}
	}
	total := 0.0
	for _, a := range order {
		total += a.sum / float64(max(a.n, 1))
	}
	return total / float64(max(len(order), 1))
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
// and the anchors fit each family's tuning, which then predicts the
// left-out cells. Every cell is predicted once, by the fold that never saw
// its source. The anchors (testdata/anchors.csv: the measurements the
// shipped tuning was fitted to) join every fold's fit and are never left
// out: they are what knee would fit to without the battery.
func CrossValidate(cells, anchors []*Cell, free, maxEval, workers int) ([]Fold, error) {
	var folds []Fold
	for _, src := range sources(cells) {
		var train, test []*Cell
		for _, c := range cells {
			if c.Source == src {
				test = append(test, c)
			} else {
				train = append(train, c)
			}
		}
		tuning, err := FitAll(train, anchors, test, free, maxEval, workers)
		if err != nil {
			return nil, err
		}
		folds = append(folds, Fold{Source: src, Tuning: tuning, Results: Evaluate(test, tuning, workers)})
	}
	return folds, nil
}

// FitAll fits each GPU family's tuning to the train cells of that family
// and its anchors, for the families some cell of need runs on (all of
// train's when need is nil). A family no train cell measures keeps the
// shipped tuning: fitted to its anchors alone, with the parameters they
// can tell apart (memory efficiency, step overhead, all-reduce latency),
// where four free ones would be three points' guess.
func FitAll(train, anchors, need []*Cell, free, maxEval, workers int) (Tuning, error) {
	byFamily := map[string][]*Cell{}
	for _, c := range train {
		byFamily[familyOf(c)] = append(byFamily[familyOf(c)], c)
	}
	tuning := Tuning{}
	for family, fc := range byFamily {
		if need != nil && !needed(need, family) {
			continue
		}
		for _, a := range anchors {
			if familyOf(a) == family {
				fc = append(fc, a)
			}
		}
		_, shippedTuning := shipped(fc[0])
		t, _, err := FitFamily(fc, family, shippedTuning, free, maxEval, workers)
		if err != nil {
			return nil, err
		}
		tuning[family] = t
	}
	return tuning, nil
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
