package bench

import (
	"context"
	"time"

	"github.com/kneebench/knee/results"
)

// SweepOptions configures RunSweep.
type SweepOptions struct {
	// Loads are the levels, in order: rates or concurrencies.
	Loads []float64
	// RunLevel measures one level.
	RunLevel func(ctx context.Context, index int, load float64) (*results.Run, error)
	// OnLevel sees every level as soon as it ends, with the sweep so far
	// (knees updated), e.g. to print a row and write the files.
	OnLevel func(s *results.Sweep, l results.Level)
	// StopOnSaturation ends the sweep once two levels in a row miss the SLO.
	StopOnSaturation bool
	// Sweep is the sweep to fill (label, config, axis, SLO set).
	Sweep *results.Sweep
}

// RunSweep measures every level in turn. A level that fails is recorded and
// the sweep goes on. Cancelling ctx ends the current level cleanly; the
// levels measured so far are kept.
func RunSweep(ctx context.Context, o SweepOptions) *results.Sweep {
	s := o.Sweep
	s.SchemaVersion = results.SchemaVersion
	s.StartedAt = time.Now().UTC()
	misses := 0
	for i, load := range o.Loads {
		if ctx.Err() != nil {
			break
		}
		run, err := o.RunLevel(ctx, i, load)
		l := results.Level{Load: load, Run: run}
		if err != nil {
			l.Run, l.Error = nil, err.Error()
		}
		s.Levels = append(s.Levels, l)
		s.Interrupted = ctx.Err() != nil
		s.FindKnees()
		if o.OnLevel != nil {
			o.OnLevel(s, l)
		}
		if o.StopOnSaturation {
			if MissesSLO(s, l) {
				misses++
			} else {
				misses = 0
			}
			if misses >= 2 {
				break
			}
		}
	}
	s.Interrupted = ctx.Err() != nil
	return s
}

// MissesSLO reports whether a measured level misses the sweep's SLO, or
// cannot be said to meet it (too many of its requests are missing from
// its percentiles).
func MissesSLO(s *results.Sweep, l results.Level) bool {
	if l.Run == nil {
		return false
	}
	v, ok := s.SLO.Value(l.Run)
	return !ok || v > s.SLO.Threshold() || l.Run.Requests.ErrorRate() >= s.SLO.MaxErrorRate ||
		l.Run.MissingShare() > results.MaxMissingShare
}
