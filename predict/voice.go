package predict

import (
	"context"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// VoiceOptions is one level of the call workload: bench's own options
// (of which the client's, Client, Records, Progress, the window hooks,
// Shard and StartAt, have no meaning in virtual time and are ignored), the
// simulated target, and the fleet serving it (see Options).
type VoiceOptions struct {
	bench.VoiceOptions
	Target   Target
	Replicas int
	Routing  Routing
}

// VoiceLevel runs one level of the call workload in virtual time on the
// one driver: calls arrive on bench's schedule (the same seeded offsets,
// rebased to the first), each sends turn 1 to warm its prefix and every
// later turn with the whole history after its gap, and the result is
// summarised as bench.RunVoice summarises a live one. Cancelling ctx stops
// it, with ctx's error.
func VoiceLevel(ctx context.Context, o VoiceOptions) (*results.Run, error) {
	if err := o.VoiceOptions.Validate(); err != nil {
		return nil, err
	}
	o.Target.Chat = true
	cfg, ctxLen, err := o.Target.Config()
	if err != nil {
		return nil, err
	}
	srv := newSimServer(o.Target, cfg, ctxLen, o.Replicas, o.Routing, o.Seed, nil)
	level := o.SummaryLevel()
	level.Config.Predicted = true
	level.Prefixes = workload.NewPrefixTracker()
	sum := summary.New(level, 1)
	d := driver.New(driver.Options{Clock: srv, Sender: srv, Measured: sum.Add, Prefixes: level.Prefixes, Turnaround: turnaround})
	out, err := d.RunCalls(ctx, driver.Calls{Load: o.CallLoad(), Source: o.CallSource})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := sum.Calls(health.Report{}, out.Tally)
	res.Health = results.Health{Verdict: results.VerdictVirtual}
	res.Notes = append(res.Notes, "predicted in virtual time on the simulator's scheduler core: no request was sent")
	return res, nil
}
