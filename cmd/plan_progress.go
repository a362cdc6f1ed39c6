package cmd

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
)

// planProgress shows a plan's progress on a terminal: configurations
// searched of all, predictions made, time spent and left at the pace so
// far, and the cheapest answer found yet. Piped, it says nothing (the
// plan's own lines are the record). It returns what stops it.
func planProgress(w io.Writer, q *predict.Question, started time.Time) func() {
	progress := report.NewTerminalProgress(w)
	if !progress.Terminal() {
		return func() {}
	}
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
				el := time.Since(started).Truncate(time.Second)
				segs := []string{fmt.Sprintf("planning: %d of %d configurations", done, total), fmt.Sprintf("%d predictions", predictions), el.String()}
				if done > 0 && done < total {
					left := time.Duration(float64(time.Since(started)) / float64(done) * float64(total-done)).Truncate(time.Second)
					segs = append(segs, "about "+left.String()+" left")
				}
				if best != "" {
					segs = append(segs, "cheapest so far "+best)
				}
				mu.Unlock()
				progress.Line(segs)
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}
