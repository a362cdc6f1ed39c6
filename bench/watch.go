package bench

import (
	"context"
	"time"

	"github.com/kneebench/knee/results"
)

// Watcher puts the server's own account of a measured window beside the
// client's (bench/serverview's View).
type Watcher interface {
	Start(ctx context.Context)
	End(ctx context.Context)
	Fill(res *results.Run)
}

// LevelStarter is a watcher with work before a level's first request,
// its warm-up's included (a prefix-cache reset, so the level starts cold).
type LevelStarter interface {
	BeforeLevel(ctx context.Context)
}

// Finisher is a watcher with work once a level is over, whether or not
// its window reached its end (a profiler a cut-short level left running).
type Finisher interface {
	Finish()
}

// GaugeReader is a watcher that reads the server's gauges while the
// window runs (bench/serverview's View): a live view shows the latest,
// its instant from start (the level's).
type GaugeReader interface {
	LatestGauges(start time.Time) (*results.SliceGauges, bool)
}

// LatestGauges implements GaugeReader with the first watcher that reads
// gauges.
func (ws Watchers) LatestGauges(start time.Time) (*results.SliceGauges, bool) {
	for _, w := range ws {
		if g, ok := w.(GaugeReader); ok {
			return g.LatestGauges(start)
		}
	}
	return nil, false
}

// Watchers is several watchers of one window, called in order.
type Watchers []Watcher

// Start implements Watcher.
func (ws Watchers) Start(ctx context.Context) {
	for _, w := range ws {
		w.Start(ctx)
	}
}

// End implements Watcher, the last started first ended.
func (ws Watchers) End(ctx context.Context) {
	for i := len(ws) - 1; i >= 0; i-- {
		ws[i].End(ctx)
	}
}

// Fill implements Watcher.
func (ws Watchers) Fill(res *results.Run) {
	for _, w := range ws {
		w.Fill(res)
	}
}

// BeforeLevel implements LevelStarter for the watchers that have one.
func (ws Watchers) BeforeLevel(ctx context.Context) {
	for _, w := range ws {
		if s, ok := w.(LevelStarter); ok {
			s.BeforeLevel(ctx)
		}
	}
}

// Finish implements Finisher for the watchers that have one, the last
// started first.
func (ws Watchers) Finish() {
	for i := len(ws) - 1; i >= 0; i-- {
		if f, ok := ws[i].(Finisher); ok {
			f.Finish()
		}
	}
}
