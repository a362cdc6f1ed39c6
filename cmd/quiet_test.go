package cmd

import (
	"fmt"

	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/results"
)

// runTry is what a live run's client said of itself, for quiet.Live.
func runTry(r *results.Run) quiet.Try {
	if r == nil {
		return quiet.Try{Verdict: results.VerdictHealthy}
	}
	return quiet.Try{Verdict: r.Health.Verdict, Reasons: r.Health.Reasons}
}

// simTry is runTry for a live run against an in-process knee sim that
// compares timings with a prediction: a run whose client kept time while
// the simulator's own steps ran late (knee sim's lag, in the server view)
// was starved all the same, and is measured again.
func simTry(r *results.Run) quiet.Try {
	try := runTry(r)
	if r != nil && quiet.Judgeable(try.Verdict) && r.Server != nil && r.Server.Lag != nil && r.Server.Lag.P99 > results.ServerLateMs {
		try = quiet.Try{Verdict: results.VerdictHostStarved, Reasons: []string{fmt.Sprintf("the simulator's steps ran late (lag p99 %.1f ms)", r.Server.Lag.P99)}}
	}
	return try
}

// sweepTry is the worst of a sweep's levels' client health, naming the
// level, for quiet.Live.
func sweepTry(s *results.Sweep) quiet.Try {
	for _, l := range s.Levels {
		if l.Run != nil && !quiet.Judgeable(l.Run.Health.Verdict) {
			try := runTry(l.Run)
			try.Reasons = append([]string{fmt.Sprintf("level %g", l.Load)}, try.Reasons...)
			return try
		}
	}
	return quiet.Try{Verdict: results.VerdictHealthy}
}
