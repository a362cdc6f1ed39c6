package bench

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// Level is one level of load, ready to run live or in virtual time: what
// it sends and how much (its Work: requests or calls), what its result
// records, and where its records go. A Series prepares a run's, sweep's or
// prediction's levels; a Runner runs one.
type Level struct {
	// Index is the level's place in its series (from 0), and Load its
	// rate or concurrency, for a runner's progress.
	Index int
	Load  float64
	// Work is what the level sends: Requests or Calls.
	Work Work
	// Config is copied into the result; Goodput, when set, counts the
	// requests (or turns) that meet every bound.
	Config  results.Config
	Goodput summary.Goodput
	// Slice is the width of the level's time slices (0: none kept).
	Slice time.Duration
	// TemplateTokens is what the server adds around a message's text (a
	// chat template, a BOS token), as probed; 0 when not known.
	TemplateTokens int
	// Classes, for a mix, are its classes, each summarised apart too.
	Classes []summary.Class
	// Records, when set, receives one JSON line per request (or turn),
	// with RecordLevel as its level when set.
	Records     io.Writer
	RecordLevel *float64
	// Repeat is the level's repeat (from 1) when it is measured several
	// times, for its records; 0 otherwise.
	Repeat int
	// finish adds to the result what the series knows of the level.
	finish func(*results.Run)
}

// Finish adds to a level's result what its series knows of it (how its
// prompts were sized, whether they repeat an earlier level's); a runner
// calls it once the level has run.
func (lv *Level) Finish(res *results.Run) {
	if lv.finish != nil && res != nil {
		lv.finish(res)
	}
}

// Work is what a level sends: Requests (single requests) or Calls
// (multi-turn calls). It is the one place the two part ways: a runner
// drives either on the one driver with Level.Drive.
type Work interface {
	// Validate reports every problem with the work's load at once.
	Validate() error
	// PoolSize is the connections the work needs.
	PoolSize() int
	// Shard is the part of the load this process sends.
	Shard() driver.Shard
	// isWork seals the interface: Requests and Calls are the kinds.
	isWork()
}

// Requests is a level of single requests: a warm-up, then the measured
// window and its drain.
type Requests struct {
	Source workload.Source
	Load   driver.Load
	// CountTokens, when set (--tokenizer), counts text as the model's
	// tokenizer does: the client splits a reasoned answer's count by it.
	CountTokens func(string) int
}

// Calls is a level of multi-turn calls, arriving open loop or held closed
// loop in slots (driver.CallLoad): each sends its
// warm-up turns, then its measured turns after their gaps, each with the
// whole history.
type Calls struct {
	Source workload.Calls
	Load   driver.CallLoad
}

func (Requests) isWork() {}
func (Calls) isWork()    {}

// Validate implements Work.
func (w Requests) Validate() error { return w.Load.Validate() }

// Validate implements Work: the calls' script and their arrivals.
func (w Calls) Validate() error {
	var errs []error
	if v, ok := w.Source.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := w.Load.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// PoolSize implements Work.
func (w Requests) PoolSize() int { return w.Load.PoolSize() }

// PoolSize implements Work: a connection per call in progress.
func (w Calls) PoolSize() int {
	if w.Load.MaxConcurrentCalls > 0 {
		return w.Load.MaxConcurrentCalls
	}
	return 16384
}

// Shard implements Work.
func (w Requests) Shard() driver.Shard { return w.Load.Shard }

// Shard implements Work.
func (w Calls) Shard() driver.Shard { return w.Load.Shard }

// Summary is what a summary of the level must know; prefixes is the
// tracker the driver fills the records' prefix shares with, and
// noHistograms leaves the encoded histograms out (for results only
// compared, never written).
func (lv *Level) Summary(prefixes *workload.PrefixTracker, noHistograms bool) summary.Level {
	l := summary.Level{Config: lv.Config, Goodput: lv.Goodput, Slice: lv.Slice, Prefixes: prefixes, NoHistograms: noHistograms, TemplateTokens: lv.TemplateTokens, Classes: lv.Classes,
		SliceHistograms: lv.Work.Shard().Sharded() && !noHistograms}
	switch w := lv.Work.(type) {
	case Requests:
		l.Load = w.Load
	case Calls:
		load := w.Load
		l.Calls, l.ColdThreshold = &load, w.Source.ColdThreshold()
	}
	return l
}

// Window is what a live runner adds to a level's run on the wall clock:
// the instant the window starts (StartAt, shards of one load together)
// and hooks around the measured window (a server view's reset and read).
type Window struct {
	StartAt                    time.Time
	OnWindowStart, OnWindowEnd func(ctx context.Context)
}

// Driven is a level the driver has run: when its window started on the
// run's clock, how late after Window.StartAt the driver came to it, and
// the summary's result once the client's health is known.
type Driven struct {
	WindowStart time.Duration
	Late        time.Duration
	result      func(health.Report) *results.Run
}

// Result is the level's result with the client's health report (the zero
// report for a prediction, whose verdict the runner sets).
func (d Driven) Result(rep health.Report) *results.Run { return d.result(rep) }

// Drive runs the level's work on d, summarising every measured record
// into sum, and returns what it did. Cancelling ctx stops it; what was
// measured is kept.
func (lv *Level) Drive(ctx context.Context, d *driver.Driver, sum *summary.Summary, win Window) (Driven, error) {
	switch w := lv.Work.(type) {
	case Requests:
		out, err := d.RunRequests(ctx, driver.Requests{Load: w.Load, Source: w.Source, StartAt: win.StartAt,
			OnWindowStart: win.OnWindowStart, OnWindowEnd: win.OnWindowEnd, OnBase: sum.SetOrigin})
		return Driven{WindowStart: out.Window.Start, Late: out.Late,
			result: func(rep health.Report) *results.Run { return sum.Requests(rep, out.Window) }}, err
	case Calls:
		out, err := d.RunCalls(ctx, driver.Calls{Load: w.Load, Source: w.Source, StartAt: win.StartAt,
			OnWindowStart: win.OnWindowStart, OnWindowEnd: win.OnWindowEnd})
		return Driven{WindowStart: out.Tally.WindowStart, Late: out.Late,
			result: func(rep health.Report) *results.Run { return sum.Calls(rep, out.Tally) }}, err
	}
	return Driven{}, errors.New("a level needs work: requests or calls")
}

// Runner runs one level: live against a server (Live), or in virtual
// time on the simulator's scheduler core (predict.Virtual). As a Prober it
// also answers the probes that size a series' prompts against the server.
type Runner interface {
	Prober
	// Run runs lv and returns its result, calling lv.Finish on it.
	// Cancelling ctx stops the level; what was measured comes back marked
	// interrupted.
	Run(ctx context.Context, lv *Level) (*results.Run, error)
}

// RecordWriter is the level's --records writer, its instants counted
// from start.
func (lv *Level) RecordWriter(start time.Time) *record.Writer {
	w := record.NewWriter(lv.Records, start, lv.RecordLevel)
	if w != nil {
		w.Repeat = lv.Repeat
	}
	return w
}
