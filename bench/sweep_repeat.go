package bench

import (
	"context"

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
	s.Interrupted = ctx.Err() != nil
	results.PoolPasses(s, passes, o.Repeat)
}

// passCopy is s's header with levels, for one pass's knees.
func passCopy(s *results.Sweep, levels []results.Level) *results.Sweep {
	return &results.Sweep{SchemaVersion: s.SchemaVersion, Label: s.Label, StartedAt: s.StartedAt, Config: s.Config, Environment: s.Environment,
		Axis: s.Axis, Workload: s.Workload, SLO: s.SLO, HealthPolicy: s.HealthPolicy, Prediction: s.Prediction,
		Levels: append([]results.Level(nil), levels...)}
}
