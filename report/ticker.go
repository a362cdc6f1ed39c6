package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/kneebench/knee/results"
)

// Progress of work in virtual time (a plan's search, a prediction's
// levels, a calibration's replays) as one line a second on a terminal:
// piped, nothing (the command's own lines are the record). Each ticker
// is told of the work by the hook its caller wires, under its lock.

// tick shows what line says once a second on a terminal, until the
// function it returns is called; line runs under mu.
func tick(w io.Writer, mu *sync.Mutex, line func() []string) func() {
	progress := NewTerminalProgress(w)
	if !progress.Terminal() {
		return func() {}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				progress.Done()
				return
			case <-t.C:
				mu.Lock()
				segs := line()
				mu.Unlock()
				progress.Line(segs)
			}
		}
	})
	return func() { close(stop); wg.Wait() }
}

// timeLeft is the time spent and, once some of total is done, the time
// left at the pace so far.
func timeLeft(started time.Time, done, total int) []string {
	segs := []string{time.Since(started).Truncate(time.Second).String()}
	if done > 0 && done < total {
		left := time.Duration(float64(time.Since(started)) / float64(done) * float64(total-done)).Truncate(time.Second)
		segs = append(segs, "about "+left.String()+" left")
	}
	return segs
}

// PlanTicker shows a plan's progress: configurations searched of all,
// predictions made, time spent and left, and the cheapest answer yet.
type PlanTicker struct {
	mu          sync.Mutex
	done, total int
	predictions int64
	best        string
	bestCost    float64
	prices      map[string]float64
	started     time.Time
}

// NewPlanTicker starts a plan of total configurations priced by prices.
func NewPlanTicker(total int, prices map[string]float64, started time.Time) *PlanTicker {
	return &PlanTicker{total: total, prices: prices, started: started}
}

// Searched is told of a configuration searched: its rows, and the
// predictions made so far.
func (p *PlanTicker) Searched(rows []results.PlanRow, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.predictions = max(p.predictions, n)
	for _, r := range rows {
		// Rows are priced once the search ends: the price table now.
		cost := float64(r.GPUs) * p.prices[r.GPU]
		if r.Meets && cost > 0 && (p.best == "" || cost < p.bestCost) {
			p.best, p.bestCost = fmt.Sprintf("%d × %s ($%.2f/h)", r.Replicas, r.Config, cost), cost
		}
	}
}

// Show shows the line on w until the function it returns is called.
func (p *PlanTicker) Show(w io.Writer) func() {
	return tick(w, &p.mu, func() []string {
		segs := append([]string{fmt.Sprintf("planning: %d of %d configurations", p.done, p.total),
			fmt.Sprintf("%d predictions", p.predictions)}, timeLeft(p.started, p.done, p.total)...)
		if p.best != "" {
			segs = append(segs, "cheapest so far "+p.best)
		}
		return segs
	})
}

// PredictTicker shows a prediction's progress: levels done of all, time
// spent and left, and the largest load meeting the SLO so far.
type PredictTicker struct {
	mu          sync.Mutex
	done, total int
	meets       float64
	broken      bool
	unit        string
	started     time.Time
}

// NewPredictTicker starts a prediction of total levels along unit.
func NewPredictTicker(total int, unit string, started time.Time) *PredictTicker {
	return &PredictTicker{total: total, unit: unit, started: started}
}

// Level is told of a level predicted, in order, judged by the sweep:
// the run of levels meeting the SLO from the first, as the SLO knee counts.
func (p *PredictTicker) Level(s *results.Sweep, l results.Level) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if v := s.Levels[len(s.Levels)-1].Verdict; v != nil && v.Judged && !p.broken {
		if v.Meets {
			p.meets = l.Load
		} else {
			p.broken = true
		}
	}
}

// Show shows the line on w until the function it returns is called.
func (p *PredictTicker) Show(w io.Writer) func() {
	return tick(w, &p.mu, func() []string {
		segs := append([]string{fmt.Sprintf("predicting: %d of %d levels", p.done, p.total)}, timeLeft(p.started, p.done, p.total)...)
		if p.meets > 0 {
			segs = append(segs, fmt.Sprintf("meets the SLO up to %s%s so far", strconv.FormatFloat(p.meets, 'f', -1, 64), results.LoadUnit(p.meets, p.unit)))
		}
		return segs
	})
}

// CalibrateTicker shows a calibration's search: replays made of the most
// allowed, time spent, and the best fit's error so far (the root mean
// square of its log errors, as a percentage).
type CalibrateTicker struct {
	mu      sync.Mutex
	n, most int
	best    float64
	started time.Time
}

// NewCalibrateTicker starts a calibration's search.
func NewCalibrateTicker(started time.Time) *CalibrateTicker {
	return &CalibrateTicker{best: math.Inf(1), started: started}
}

// Evaluated is told of a replay: how many so far, the most allowed, and
// its error.
func (p *CalibrateTicker) Evaluated(evals, maxEvals int, rms float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n, p.most, p.best = evals, maxEvals, math.Min(p.best, rms)
}

// Show shows the line on w until the function it returns is called.
func (p *CalibrateTicker) Show(w io.Writer) func() {
	return tick(w, &p.mu, func() []string {
		segs := append([]string{fmt.Sprintf("calibrating: %d of at most %d replays", p.n, p.most)}, timeLeft(p.started, 0, 0)...)
		if !math.IsInf(p.best, 1) {
			segs = append(segs, fmt.Sprintf("best fit so far within about %.1f%%", 100*(math.Exp(p.best)-1)))
		}
		return segs
	})
}
