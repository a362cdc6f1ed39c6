package battery

import (
	"math"

	"github.com/kneebench/knee/simulator/sched"
)

// Result is one cell's prediction against its measurement.
type Result struct {
	Cell *Cell
	// Predicted holds each measured metric's prediction; Err is set
	// instead where the core could not run the cell (ErrUnfit).
	Predicted map[string]float64
	Err       error
}

// Error is a metric's relative error, predicted over measured less one.
func (r Result) Error(metric string) float64 {
	return r.Predicted[metric]/r.Cell.Measured[metric] - 1
}

// Tuning sets a GPU family's cost-model tuning over the shipped one; nil
// keeps the shipped tuning.
type Tuning map[string]sched.Tuning

// Evaluate predicts every cell under the tuning, at most workers at once.
func Evaluate(cells []*Cell, tuning Tuning, workers int) []Result {
	out := make([]Result, len(cells))
	jobs := make(chan int)
	done := make(chan struct{})
	for range max(workers, 1) {
		go func() {
			for i := range jobs {
				out[i] = evaluate(cells[i], tuning)
			}
			done <- struct{}{}
		}()
	}
	for i := range cells {
		jobs <- i
	}
	close(jobs)
	for range max(workers, 1) {
		<-done
	}
	return out
}

func evaluate(c *Cell, tuning Tuning) Result {
	cfg, spec, err := c.Config()
	r := Result{Cell: c, Err: err}
	if err != nil {
		return r
	}
	if setup := setups[c.Source]; setup != nil {
		setup(c, spec, &cfg)
	}
	if t, ok := tuning[spec.Hardware.Family]; ok {
		cfg.Costs.Tuning = t
	}
	r.Predicted, r.Err = Simulate(cfg, c)
	return r
}

// Medians are the median absolute relative error of each metric over the
// results that predicted it, and how many there were.
func Medians(results []Result) map[string]struct {
	Median float64
	N      int
} {
	errs := map[string][]float64{}
	for _, r := range results {
		if r.Err != nil {
			continue
		}
		for m := range r.Cell.Measured {
			errs[m] = append(errs[m], math.Abs(r.Error(m)))
		}
	}
	out := map[string]struct {
		Median float64
		N      int
	}{}
	for m, e := range errs {
		out[m] = struct {
			Median float64
			N      int
		}{sum(e).P50, len(e)}
	}
	return out
}
