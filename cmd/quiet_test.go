package cmd

import (
	"fmt"

	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/results"
)

// runTry is what a live run's client said of itself, for quiet.Retry.
func runTry(r *results.Run) quiet.Try {
	if r == nil {
		return quiet.Try{Verdict: results.VerdictHealthy}
	}
	return quiet.Try{Verdict: r.Health.Verdict, Reasons: r.Health.Reasons}
}

// sweepTry is the worst of a sweep's levels' client health, naming the
// level, for quiet.Retry.
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
