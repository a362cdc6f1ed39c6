package predict

import (
	"context"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// VoiceOptions is one level of the call workload: bench's own options
// (of which the client's, Client, Progress, the window hooks and StartAt,
// have no meaning in virtual time and are ignored; Records count from the
// epoch, as Options.Records), the simulated target, and the fleet serving
// it (see Options).
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
// it at once, what it predicted so far marked interrupted.
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
	records := record.NewWriter(o.Records, recordsEpoch, o.RecordLevel)
	d := driver.New(driver.Options{Clock: srv, Sender: srv, Records: records, Measured: sum.Add, Prefixes: level.Prefixes, Turnaround: turnaround})
	out, err := d.RunCalls(ctx, driver.Calls{Load: o.CallLoad(), Source: o.CallSource})
	if err != nil {
		return nil, err
	}
	records.Flush()
	res := sum.Calls(health.Report{}, out.Tally)
	return predicted(ctx, res), nil
}
