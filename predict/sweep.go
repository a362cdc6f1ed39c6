package predict

import (
	"context"
	"runtime"
	"sync"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
)

// SweepOptions configures Sweep.
type SweepOptions struct {
	// Ctx, when it ends, stops the sweep: levels under way end at once,
	// marked interrupted, and no further level starts.
	Ctx context.Context
	// Loads are the levels (rates or concurrencies); Run predicts one, by
	// index and load (with Level or VoiceLevel).
	Loads []float64
	Run   func(index int, load float64) (*results.Run, error)
	// Parallel bounds the levels run at once; 0 means one per CPU.
	Parallel int
	// StopOnSaturation keeps the levels up to the second of two in a row
	// that miss the SLO, as a live sweep stops there.
	StopOnSaturation bool
	// Sweep is the sweep to fill (label, config, axis, SLO set).
	Sweep *results.Sweep
}

// Sweep predicts every level, in parallel across cores (each level is its
// own server, as each live level starts from a drained one), and fills
// the sweep in order with its knees.
func Sweep(o SweepOptions) *results.Sweep {
	s := o.Sweep
	s.SchemaVersion = results.SchemaVersion
	levels := make([]results.Level, len(o.Loads))
	par := o.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	ctx := o.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	started := 0
	for i, load := range o.Loads {
		sem <- struct{}{}
		if ctx.Err() != nil {
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			levels[i] = results.Level{Load: load}
			var err error
			levels[i].Run, err = o.Run(i, load)
			if err != nil {
				levels[i].Run, levels[i].Error = nil, err.Error()
			}
		}()
	}
	wg.Wait()
	s.Interrupted = ctx.Err() != nil
	misses := 0
	for _, l := range levels[:started] {
		s.Levels = append(s.Levels, l)
		if !o.StopOnSaturation {
			continue
		}
		if bench.MissesSLO(s, l) {
			misses++
		} else {
			misses = 0
		}
		if misses >= 2 {
			break
		}
	}
	s.FindKnees()
	return s
}
