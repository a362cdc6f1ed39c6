package bench

import (
	"context"
	"io"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// Options configures Run.
type Options struct {
	Client *transport.Client
	Source workload.Source
	Load   driver.Load
	// Records, when set, receives one JSON line per request
	// (results.RecordLine), with RecordLevel as its level when set.
	Records     io.Writer
	RecordLevel *float64
	// Progress, when set, is called about twice a second.
	Progress func(Progress)
	// LiveDetail makes Progress carry the recent percentiles and the
	// client's health too, for a live view. They cost the client a few
	// milliseconds of CPU a second, so only a view asks for them.
	LiveDetail bool
	// OnWindowStart, when set, runs after warm-up finished and before the
	// measured window starts (e.g. to reset the server's summary).
	OnWindowStart func(ctx context.Context)
	// OnWindowEnd, when set, runs after the window drained.
	OnWindowEnd func(ctx context.Context)
	// Config is copied into the result.
	Config results.Config
	// summary.Goodput, when set, counts the requests that meet every bound.
	Goodput summary.Goodput
	// StartAt, when set, is the wall instant the measured window starts:
	// shards of one load all start their schedule then, after their own
	// warm-up. A run that is not ready by then starts late, its arrivals
	// due from StartAt all the same, and reports by how much.
	StartAt time.Time
	// NoHistograms leaves the encoded histograms out of the result: for
	// results only compared and never written (a calibration's replays),
	// where compressing them is most of the summary's cost.
	NoHistograms bool
}

// Run executes the load: warm-up, the measured window, and the drain of
// stragglers, on the one driver with the HTTP client. Cancelling ctx stops
// sending, cuts in-flight requests short and still returns everything
// measured so far, with Interrupted set.
func Run(ctx context.Context, o Options) (*results.Run, error) {
	if err := o.Load.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	records := record.NewWriter(o.Records, start, o.RecordLevel)
	l := newLive(o.Client, start, records, summary.Level{Load: o.Load, Config: o.Config, Goodput: o.Goodput, NoHistograms: o.NoHistograms})
	defer l.close()
	mon := health.Start(health.DefaultInterval)
	stopProgress := l.startProgress(ctx, mon, o.Progress, o.LiveDetail)
	out, err := l.driver.RunRequests(ctx, driver.Requests{Load: o.Load, Source: o.Source, StartAt: o.StartAt,
		OnWindowStart: o.OnWindowStart, OnWindowEnd: o.OnWindowEnd})
	stopProgress()
	rep := mon.Stop()
	records.Flush()
	if err != nil {
		return nil, err
	}
	res := l.sum.Requests(rep, out.Window)
	res.Connections = l.connections()
	res.StartedAt = start.UTC()
	res.WindowStartedAt = start.Add(out.Window.Start).UTC()
	res.Shard = shardInfo(o.Load.Shard, o.StartAt, out.Late)
	res.Interrupted = ctx.Err() != nil
	return res, nil
}
