package cmd

import (
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
)

// tickProgress shows what line says once a second on a terminal, until
// the function it returns is called; piped, it shows nothing (the
// command's own lines are the record). line runs under mu, which the
// caller's own updates take too.
func tickProgress(w io.Writer, mu *sync.Mutex, line func() []string) func() {
	progress := report.NewTerminalProgress(w)
	if !progress.Terminal() {
		return func() {}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
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
	}()
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

// planProgress shows a plan's progress on a terminal: configurations
// searched of all, predictions made, time spent and left at the pace so
// far, and the cheapest answer found yet. It returns what stops it.
func planProgress(w io.Writer, q *predict.Question, started time.Time) func() {
	var mu sync.Mutex
	done, predictions := 0, int64(0)
	best := ""
	bestCost := 0.0
	q.Searched = func(rows []results.PlanRow, n int64) {
		mu.Lock()
		defer mu.Unlock()
		done++
		predictions = max(predictions, n)
		for _, r := range rows {
			// Rows are priced once the search ends: the price table now.
			cost := float64(r.GPUs) * q.Prices[r.GPU]
			if r.Meets && cost > 0 && (best == "" || cost < bestCost) {
				best, bestCost = fmt.Sprintf("%d × %s ($%.2f/h)", r.Replicas, r.Config, cost), cost
			}
		}
	}
	total := len(q.Candidates)
	return tickProgress(w, &mu, func() []string {
		segs := append([]string{fmt.Sprintf("planning: %d of %d configurations", done, total), fmt.Sprintf("%d predictions", predictions)},
			timeLeft(started, done, total)...)
		if best != "" {
			segs = append(segs, "cheapest so far "+best)
		}
		return segs
	})
}

// predictProgress shows a prediction's progress on a terminal: levels
// done of all, time spent and left, and the largest load meeting the SLO
// so far. It chains onLevel (the sweep's own, or nil) and returns it with
// what stops the display.
func predictProgress(w io.Writer, total int, unit string, started time.Time, onLevel func(*results.Sweep, results.Level)) (func(*results.Sweep, results.Level), func()) {
	var mu sync.Mutex
	done, meets, broken := 0, 0.0, false
	seen := func(s *results.Sweep, l results.Level) {
		mu.Lock()
		done++
		// Levels come in order, judged once the sweep has them: the run of
		// levels meeting the SLO from the first, as the SLO knee counts.
		if v := s.Levels[len(s.Levels)-1].Verdict; v != nil && v.Judged && !broken {
			if v.Meets {
				meets = l.Load
			} else {
				broken = true
			}
		}
		mu.Unlock()
		if onLevel != nil {
			onLevel(s, l)
		}
	}
	stop := tickProgress(w, &mu, func() []string {
		segs := append([]string{fmt.Sprintf("predicting: %d of %d levels", done, total)}, timeLeft(started, done, total)...)
		if meets > 0 {
			segs = append(segs, fmt.Sprintf("meets the SLO up to %s%s so far", num(meets), unit))
		}
		return segs
	})
	return seen, stop
}

// calibrateProgress shows a calibration's search on a terminal: replays
// of the fitted levels made of the most allowed, time spent, and the
// best fit's error so far (the root mean square of its log errors, as a
// percentage).
func calibrateProgress(w io.Writer, o *predict.CalibrateOptions, started time.Time) func() {
	var mu sync.Mutex
	n, most, best := 0, 0, math.Inf(1)
	o.Evaluated = func(evals, maxEvals int, rms float64) {
		mu.Lock()
		defer mu.Unlock()
		n, most, best = evals, maxEvals, math.Min(best, rms)
	}
	return tickProgress(w, &mu, func() []string {
		segs := append([]string{fmt.Sprintf("calibrating: %d of at most %d replays", n, most)}, timeLeft(started, 0, 0)...)
		if !math.IsInf(best, 1) {
			segs = append(segs, fmt.Sprintf("best fit so far within about %.1f%%", 100*(math.Exp(best)-1)))
		}
		return segs
	})
}
