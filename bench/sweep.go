package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
)

// SweepOptions are a sweep's levels and its rules.
type SweepOptions struct {
	// Loads are the levels' rates or concurrencies, along the sweep's
	// axis, in order.
	Loads []float64
	// Level makes level i at load: a series' (Series.Levels), or a
	// calibration's replays.
	Level func(i int, load float64) (*Level, error)
	// Parallel is how many levels run at once: one (0 or 1) for a live
	// sweep, whose levels must not share the server; more in virtual
	// time, where every level is its own server.
	Parallel int
	// StopOnSaturation ends the sweep once two levels in a row miss the
	// SLO (their verdicts, results.Verdict): the second is kept, and the levels after it are not run (or,
	// run side by side, are dropped).
	StopOnSaturation bool
	// Records, when set, receives every level's records, level after
	// level (levels run side by side write theirs once their turn comes).
	Records io.Writer
	// OnLevel sees every level as soon as it and the levels before it have
	// ended, with the sweep so far (its knees found), e.g. to print a row
	// and write the files.
	OnLevel func(s *results.Sweep, l results.Level)
	// Sweep is the sweep to fill (label, config, axis, SLO set).
	Sweep *results.Sweep
	// Repeat, past one, measures every level that many times (see
	// repeatPasses), repeat k by RepeatLevel(k, i, load).
	Repeat      int
	RepeatLevel func(rep, i int, load float64) (*Level, error)
	// OnRepeat sees each level of a repeat after the first as it ends.
	OnRepeat func(rep int, l results.Level)
}

// Sweep runs every level with r and fills o.Sweep in order, with its
// knees. A level that fails is recorded and the sweep goes on. Cancelling
// ctx ends the levels under way cleanly (kept, marked interrupted) and
// starts no more.
func Sweep(ctx context.Context, r Runner, o SweepOptions) *results.Sweep {
	if o.Repeat > 1 {
		level := o.Level
		o.Level = func(i int, load float64) (*Level, error) {
			lv, err := level(i, load)
			if lv != nil {
				lv.Repeat = 1
			}
			return lv, err
		}
	}
	s := pass(ctx, r, o)
	if o.Repeat > 1 {
		repeatPasses(ctx, r, o, s)
	}
	return s
}

// pass runs the sweep's levels once.
func pass(ctx context.Context, r Runner, o SweepOptions) *results.Sweep {
	s := o.Sweep
	s.SchemaVersion = results.SchemaVersion
	par := o.Parallel
	if par < 1 {
		par = 1
	}
	runCtx, stopRest := context.WithCancel(ctx)
	defer stopRest()
	n := len(o.Loads)
	done := make([]chan results.Level, n)
	for i := range done {
		done[i] = make(chan results.Level, 1)
	}
	bufs := make([]*bytes.Buffer, n)
	var wg sync.WaitGroup
	wg.Add(1)
	go startLevels(runCtx, stopRest, r, o, par, done, bufs, &wg)
	misses := 0
	for i := range o.Loads {
		// Every level started is kept, in order, cut short or not.
		l, ok := <-done[i]
		if !ok {
			break
		}
		if bufs[i] != nil {
			_, _ = o.Records.Write(bufs[i].Bytes())
		}
		s.Levels = append(s.Levels, l)
		s.Interrupted = ctx.Err() != nil
		s.FindKnees()
		if o.OnLevel != nil {
			o.OnLevel(s, l)
		}
		if o.StopOnSaturation && missedTwice(s, &misses) {
			break
		}
	}
	stopRest()
	wg.Wait()
	s.Interrupted = ctx.Err() != nil
	s.FindKnees()
	return s
}

// startLevels starts the sweep's levels in order, par at a time, each
// sending its result to its own channel; once runCtx ends no level starts
// and the rest's channels close. With levels in parallel, each keeps its
// records apart (bufs) so that the file holds them level by level.
func startLevels(runCtx context.Context, stop func(), r Runner, o SweepOptions, par int, done []chan results.Level, bufs []*bytes.Buffer, wg *sync.WaitGroup) {
	defer wg.Done()
	sem := make(chan struct{}, par)
	for i, load := range o.Loads {
		select {
		case sem <- struct{}{}:
		case <-runCtx.Done():
		}
		if runCtx.Err() != nil {
			// Stopped: no level starts any more.
			for _, d := range done[i:] {
				close(d)
			}
			return
		}
		var rec io.Writer = o.Records
		if o.Records != nil && par > 1 {
			bufs[i] = &bytes.Buffer{}
			rec = bufs[i]
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			l, err := runOne(runCtx, r, o.Level, i, load, rec)
			if _, refused := errors.AsType[*driver.RefusedError](err); refused {
				// The server refuses what the workload sends: every level
				// would be refused alike.
				stop()
			}
			done[i] <- l
		}()
	}
}

// missedTwice counts the last level's verdict, as FindKnees just gave it,
// into a run of misses and reports whether two levels in a row missed the
// SLO; a level the SLO says nothing of (failed, cut, its client unhealthy)
// neither counts as a miss nor breaks a run of them.
func missedTwice(s *results.Sweep, misses *int) bool {
	switch v := s.Levels[len(s.Levels)-1].Verdict; {
	case v == nil || !v.Judged:
	case v.Meets:
		*misses = 0
	default:
		*misses++
	}
	return *misses >= 2
}

// runOne prepares and runs level i; a level that fails is kept with its
// error.
func runOne(ctx context.Context, r Runner, level func(int, float64) (*Level, error), i int, load float64, records io.Writer) (results.Level, error) {
	l := results.Level{Load: load}
	lv, err := level(i, load)
	if err == nil {
		if records != nil {
			lv.Records, lv.RecordLevel = records, &l.Load
		}
		l.Run, err = r.Run(ctx, lv)
	}
	if err != nil {
		l.Run, l.Error = nil, err.Error()
	}
	return l, err
}

// Levels makes the series' levels along axis ("rate" or "concurrency"),
// sized against p on first use, each with cfg as the target's
// configuration (see Level).
func (s *Series) Levels(p Prober, axis string, cfg results.Config) func(i int, load float64) (*Level, error) {
	return func(i int, load float64) (*Level, error) {
		rate, concurrency := At(axis, load)
		return s.Level(i, p, rate, concurrency, cfg)
	}
}
