package bench

import (
	"context"
	"fmt"

	"github.com/kneebench/knee/results"
)

// repeatPasses measures the levels of s, which its first pass ran, again
// until each has o.Repeat repeats, and pools each level's (results.PoolRepeats).
//
// The repeats are interleaved: every pass runs all the levels in order
// before the next pass starts, so a drift of the server or the host over
// the sweep spreads over every level instead of passing for load. Later
// passes run exactly the levels the first kept (a saturated sweep's stop
// included). A level is pooled from the repeats that measured it; a cut
// sweep pools what it has.
func repeatPasses(ctx context.Context, r Runner, o SweepOptions, s *results.Sweep) {
	loads := make([]float64, len(s.Levels))
	for i, l := range s.Levels {
		loads[i] = l.Load
	}
	passes := []*results.Sweep{passCopy(s, s.Levels)}
	for rep := 1; rep < o.Repeat && ctx.Err() == nil && len(loads) > 0; rep++ {
		ps := passCopy(s, nil)
		po := SweepOptions{Loads: loads, Parallel: o.Parallel, Records: o.Records, Sweep: ps,
			Level: func(i int, load float64) (*Level, error) {
				lv, err := o.RepeatLevel(rep, i, load)
				if lv != nil {
					lv.Repeat = rep + 1
				}
				return lv, err
			}}
		if o.OnRepeat != nil {
			po.OnLevel = func(_ *results.Sweep, l results.Level) { o.OnRepeat(rep, l) }
		}
		passes = append(passes, pass(ctx, r, po))
	}
	for i := range s.Levels {
		var runs []*results.Run
		for _, p := range passes {
			if i < len(p.Levels) && p.Levels[i].Run != nil {
				runs = append(runs, p.Levels[i].Run)
			}
		}
		l := &s.Levels[i]
		switch {
		case len(runs) >= 2:
			pooled, err := results.PoolRepeats(runs)
			if err != nil {
				l.Error = fmt.Sprintf("%d repeats measured, not pooled: %v", len(runs), err)
				continue
			}
			l.Run = pooled
			if len(runs) < o.Repeat {
				pooled.Warnings = append(pooled.Warnings, fmt.Sprintf("only %d of the %d repeats measured this level", len(runs), o.Repeat))
			}
		case len(runs) == 1:
			l.Run.Warnings = append(l.Run.Warnings, fmt.Sprintf("only 1 of the %d repeats measured this level: it has no interval", o.Repeat))
		}
	}
	s.Repeats = results.KneesAcrossPasses(passes, o.Repeat)
	s.Interrupted = ctx.Err() != nil
	s.FindKnees()
}

// passCopy is s's header with levels, for one pass's knees.
func passCopy(s *results.Sweep, levels []results.Level) *results.Sweep {
	return &results.Sweep{SchemaVersion: s.SchemaVersion, Label: s.Label, StartedAt: s.StartedAt, Config: s.Config, Environment: s.Environment,
		Axis: s.Axis, Workload: s.Workload, SLO: s.SLO, HealthPolicy: s.HealthPolicy, Prediction: s.Prediction,
		Levels: append([]results.Level(nil), levels...)}
}
