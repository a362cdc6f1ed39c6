package bench

import (
	"context"
	"errors"
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

// VoiceOptions configures RunVoice.
type VoiceOptions struct {
	Client *transport.Client
	// CallSource says what the calls say: the voice workload's calls, or a
	// dataset's conversations.
	CallSource workload.Calls
	// Rate is call arrivals per second (Poisson).
	Rate float64
	// Calls or Duration bounds the arrivals of the measured window.
	Calls    int
	Duration time.Duration
	// MaxConcurrentCalls caps calls in progress; arrivals beyond it are
	// shed and counted, never silently dropped. Zero means no cap.
	MaxConcurrentCalls int
	Seed               uint64
	// DrainTimeout bounds the wait for calls still in progress once the
	// arrivals have ended; turns still running then are cut and counted as
	// interrupted. Zero waits for every call.
	DrainTimeout time.Duration
	// Records, when set, receives one JSON line per turn, with RecordLevel
	// as its level when set.
	Records       io.Writer
	RecordLevel   *float64
	Progress      func(Progress)
	LiveDetail    bool // as Options.LiveDetail
	OnWindowStart func(ctx context.Context)
	OnWindowEnd   func(ctx context.Context)
	Config        results.Config
	// summary.Goodput, when set, counts the measured turns that meet every bound.
	Goodput summary.Goodput
	// Shard, when set, runs only this process's calls (call k when k mod
	// Count is Index); the cap on calls is split alike. StartAt, when set,
	// is the instant the call schedule starts (see Options.StartAt).
	Shard   driver.Shard
	StartAt time.Time
}

// Validate reports every problem with o's calls and their arrivals at
// once.
func (o VoiceOptions) Validate() error {
	var errs []error
	if v, ok := o.CallSource.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := o.CallLoad().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// RunVoice runs the call workload on the one driver with the HTTP client:
// calls arrive open loop; each sends its warm-up turn (turn 1) to warm its
// prefix, then after every gap the next turn with the full history. The
// measured turns are timed from when they were due (the end of the gap).
// Cancelling ctx stops arrivals, cuts open turns short, and returns what
// was measured.
func RunVoice(ctx context.Context, o VoiceOptions) (*results.Run, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	records := record.NewWriter(o.Records, start, o.RecordLevel)
	l := newLive(o.Client, start, records, o.SummaryLevel())
	defer l.close()
	mon := health.Start(health.DefaultInterval)
	stopProgress := l.startProgress(ctx, mon, o.Progress, o.LiveDetail)
	out, err := l.driver.RunCalls(ctx, driver.Calls{Load: o.CallLoad(), Source: o.CallSource, StartAt: o.StartAt,
		OnWindowStart: o.OnWindowStart, OnWindowEnd: o.OnWindowEnd})
	stopProgress()
	rep := mon.Stop()
	records.Flush()
	if err != nil {
		return nil, err
	}
	res := l.sum.Calls(rep, out.Tally)
	res.StartedAt = start.UTC()
	res.WindowStartedAt = start.Add(out.Tally.WindowStart).UTC()
	res.Shard = shardInfo(o.Shard, o.StartAt, out.Late)
	res.Interrupted = ctx.Err() != nil
	res.Connections = l.connections()
	return res, nil
}

// SummaryLevel is what a summary of o's level must know.
func (o VoiceOptions) SummaryLevel() summary.Level {
	load := o.CallLoad()
	return summary.Level{Calls: &load, ColdThreshold: o.CallSource.ColdThreshold(), Config: o.Config, Goodput: o.Goodput}
}

// CallLoad is how o's calls arrive, as the driver takes it.
func (o VoiceOptions) CallLoad() driver.CallLoad {
	return driver.CallLoad{Rate: o.Rate, Calls: o.Calls, Duration: o.Duration, MaxConcurrentCalls: o.MaxConcurrentCalls,
		Seed: o.Seed, DrainTimeout: o.DrainTimeout, Shard: o.Shard}
}
