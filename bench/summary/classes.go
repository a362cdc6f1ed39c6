package summary

import (
	"math"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
)

// Class is one class of a mix, as its level's summary sees it.
type Class struct {
	Name string
	// Share is its part of the arrivals, exact to within one at every
	// count (workload.Mix).
	Share float64
	// Goodput holds the class's own per-request bounds (its SLO's).
	Goodput Goodput
}

// classSummaries are a mix's per-class summaries: each record goes to
// the whole level's and to its class's.
type classSummaries struct {
	classes []Class
	sums    []*Summary
}

func newClassSummaries(l Level, shards int) *classSummaries {
	cs := &classSummaries{classes: l.Classes}
	for _, c := range l.Classes {
		sub := l
		sub.Classes, sub.Config, sub.Goodput = nil, results.Config{}, c.Goodput
		sub.NoHistograms = l.NoHistograms
		sub.Load.Rate *= c.Share
		cs.sums = append(cs.sums, New(sub, shards))
	}
	return cs
}

// add collects r into its class's summary.
func (cs *classSummaries) add(r *record.Record) {
	if k := r.MixClass - 1; k >= 0 && k < len(cs.sums) {
		cs.sums[k].Add(r)
	}
}

// results are the classes' results over the level's window, each with
// its share of the window's arrivals: the counts a class was dealt are
// its share of the whole to within one. Requests never sent (waiting
// for a --max-concurrency slot at the window's end) are the whole
// level's, not split.
func (cs *classSummaries) results(rep health.Report, w driver.Window) map[string]*results.Run {
	out := make(map[string]*results.Run, len(cs.sums))
	for k, s := range cs.sums {
		share := cs.classes[k].Share
		cw := w
		cw.Offered *= share
		cw.Arrivals = int64(math.Round(float64(w.Arrivals) * share))
		cw.InWindow = int64(math.Round(float64(w.InWindow) * share))
		cw.Warmup = int(math.Round(float64(w.Warmup) * share))
		cw.Unsent = 0
		out[cs.classes[k].Name] = s.windowResult(rep, cw)
	}
	return out
}
