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
