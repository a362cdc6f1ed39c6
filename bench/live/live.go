package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/kneebench/knee/bench"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// Live runs levels against a real server: the one driver on the wall
// clock, sending with the HTTP client, every measured record into the
// summary, the client's health watched throughout.
type Live struct {
	// Target is the server. Client, when set, is used for every level
	// instead of a client of the level's own (a test's, to read its
	// connections).
	Target transport.Target
	Client *transport.Client
	// Progress, when set, is called about twice a second with the level
	// running. LiveDetail makes it carry the recent percentiles and the
	// client's health too, for a live view: they cost the client a few
	// milliseconds of CPU a second, so only a view asks for them.
	Progress   func(lv *bench.Level, p Progress)
	LiveDetail bool
	// StartAt, when set, is the wall instant level 0's measured window
	// starts, and level i's Interval × i later: shards of one load all
	// start their schedule then, after their own warm-up. A level that is
	// not ready by then starts late, its arrivals due from then all the
	// same, and reports by how much.
	StartAt  time.Time
	Interval time.Duration
	// Watch, when set, makes the watchers of each level: the server's own
	// account, reset as its window starts and read once it drained, the
	// GPUs', and hooks such as a prefix-cache reset before the level
	// (CacheReset.Watcher) and the server's profiler over its window
	// (Profiler.Watcher).
	Watch func() bench.Watcher
	// Environment is copied into every result.
	Environment results.Environment
	// MaxInFlight is the most requests a level may hold in flight before
	// it stops, what it measured kept (0: bench.InFlightBound()).
	MaxInFlight int64
	// Observe, when set, sees every measured record of a level as it
	// ends, from the goroutine that ended it (an OTLP export's
	// histograms): it must be safe for concurrent use and quick.
	Observe func(lv *bench.Level, r *record.Record)

	mu     sync.Mutex
	prober *transport.Client
}

// ErrHostFull stops a level whose requests in flight reach the most the
// host's memory holds.
var ErrHostFull = errors.New("the client's memory holds no more requests in flight")

// Probe implements Prober with a small client of its own.
func (l *Live) Probe(r *workload.Request, rec *record.Record) {
	c, err := l.probeClient()
	if err != nil {
		rec.Class, rec.Message = record.ClassOther, err.Error()
		return
	}
	c.Probe(r, rec)
}

// levelClient is the client a level sends with: the runner's own, or one
// made for the level's connections and its tokenizer, closed after it.
func (l *Live) levelClient(lv *bench.Level) (*transport.Client, func(), error) {
	if l.Client != nil {
		return l.Client, func() {}, nil
	}
	t := l.target()
	if rq, ok := lv.Work.(bench.Requests); ok {
		t.CountTokens = rq.CountTokens
	}
	c, err := transport.NewClient(t, lv.Work.PoolSize())
	if err != nil {
		return nil, nil, err
	}
	return c, c.Close, nil
}

// target is the client's target: l.Target, its answers read whole held
// to half the memory budget (a quarter of what the host has available)
// unless it sets its own.
func (l *Live) target() transport.Target {
	t := l.Target
	if t.AnswerBudget == 0 {
		budget, _ := health.MemoryBudget()
		t.AnswerBudget = budget / 2
	}
	return t
}

// probeClient is the client probes are sent with.
func (l *Live) probeClient() (*transport.Client, error) {
	if l.Client != nil {
		return l.Client, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.prober == nil {
		c, err := transport.NewClient(l.target(), 2)
		if err != nil {
			return nil, err
		}
		l.prober = c
	}
	return l.prober, nil
}

// Close closes the probes' client.
func (l *Live) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.prober != nil {
		l.prober.Close()
		l.prober = nil
	}
}

// Run implements Runner: warm-up, the measured window, and the drain of
// its stragglers. Cancelling ctx stops sending, cuts in-flight requests
// short and still returns everything measured so far, with Interrupted
// set.
func (l *Live) Run(ctx context.Context, lv *bench.Level) (*results.Run, error) {
	if err := lv.Work.Validate(); err != nil {
		return nil, err
	}
	var watch bench.Watcher
	if l.Watch != nil {
		watch = l.Watch()
	}
	if s, ok := watch.(bench.LevelStarter); ok {
		s.BeforeLevel(ctx)
	}
	client, closeClient, err := l.levelClient(lv)
	if err != nil {
		return nil, err
	}
	defer closeClient()
	win := l.window(lv, watch)
	start := time.Now()
	records := lv.RecordWriter(start)
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	bound := cmp.Or(l.MaxInFlight, bench.InFlightBound())
	run := newLive(client, start, records, lv.Summary(workload.NewPrefixTracker(), false),
		bound, func() { stop(ErrHostFull) }, l.observer(lv))
	defer run.close()
	mon := health.Start(health.DefaultInterval)
	var progress func(Progress)
	if l.Progress != nil {
		progress = func(p Progress) { l.Progress(lv, p) }
	}
	if g, ok := watch.(bench.GaugeReader); ok {
		run.gauges = func() (*results.SliceGauges, bool) { return g.LatestGauges(start) }
	}
	stopProgress := run.startProgress(ctx, mon, progress, l.LiveDetail)
	out, err := lv.Drive(ctx, run.driver, run.sum, win)
	if f, ok := watch.(bench.Finisher); ok {
		f.Finish()
	}
	stopProgress()
	rep := mon.Stop()
	records.Flush()
	if err != nil {
		return nil, err
	}
	res := out.Result(rep)
	sliceHealth(res, mon, start, out.WindowStart)
	res.Warnings = appendSome(res.Warnings, hostFull(ctx, start, bound))
	res.Connections = run.connections()
	res.StartedAt = start.UTC()
	res.WindowStartedAt = start.Add(out.WindowStart).UTC()
	res.Shard = bench.ShardInfo(lv.Work.Shard(), win.StartAt, out.Late)
	res.Interrupted = ctx.Err() != nil
	res.Environment = l.Environment
	lv.Finish(res)
	if watch != nil {
		watch.Fill(res)
	}
	return res, nil
}

// window is the level's window: when it starts (shards share a start)
// and the watcher's hooks at its start and end.
func (l *Live) window(lv *bench.Level, watch bench.Watcher) bench.Window {
	win := bench.Window{}
	if !l.StartAt.IsZero() {
		win.StartAt = l.StartAt.Add(time.Duration(lv.Index) * l.Interval)
	}
	if watch != nil {
		win.OnWindowStart, win.OnWindowEnd = watch.Start, watch.End
	}
	return win
}

// hostFull is why a level stopped early when the host could hold no more
// requests in flight ("" when it did not).
func hostFull(ctx context.Context, start time.Time, bound int64) string {
	if !errors.Is(context.Cause(ctx), ErrHostFull) {
		return ""
	}
	return fmt.Sprintf("stopped at %.1f s: %d requests were in flight, the most this host holds (%v); what was measured is kept. The server fell far behind the offered load: its capacity is below it. Cap what is in flight with --max-concurrency, or offer less",
		time.Since(start).Seconds(), bound, ErrHostFull)
}

// appendSome appends s when it says something.
func appendSome(to []string, s string) []string {
	if s == "" {
		return to
	}
	return append(to, s)
}

// live is a level run against a real server: the driver on the wall
// clock, sending with the HTTP client.
type live struct {
	client *transport.Client
	clock  *driver.WallClock
	sender *liveSender
	driver *driver.Driver
	sum    *summary.Summary
	// gauges, when set, is the server's latest gauges, for a live view.
	gauges func() (*results.SliceGauges, bool)
}

// newLive sets up a level's driver: record times from start, measured
// records summarised as level says, spread over a lock per processor's
// worth of concurrent ends.
func newLive(c *transport.Client, start time.Time, records *record.Writer, level summary.Level, maxInFlight int64, overflow func(),
	observe func(*record.Record)) *live {
	c.SetStart(start)
	l := &live{client: c, clock: driver.NewWallClock(start), sender: &liveSender{client: c, idle: make(chan *driver.Flight)},
		sum: summary.New(level, 4*runtime.GOMAXPROCS(0))}
	measured := l.sum.Add
	if observe != nil {
		measured = func(r *record.Record) {
			l.sum.Add(r)
			observe(r)
		}
	}
	l.driver = driver.New(driver.Options{Clock: l.clock, Sender: l.sender, Records: records, Measured: measured, Prefixes: level.Prefixes,
		MaxInFlight: maxInFlight, Overflow: overflow, ServerHistory: c.ServerHistory()})
	rounds, result := c.ToolLoop()
	l.driver.SetTools(c.Tools(), rounds, result)
	return l
}

// observer is Observe for lv's records, or nil.
func (l *Live) observer(lv *bench.Level) func(*record.Record) {
	if l.Observe == nil {
		return nil
	}
	return func(r *record.Record) { l.Observe(lv, r) }
}

// close ends the sender's goroutines.
func (l *live) close() { l.sender.close() }

// connections is what happened to the client's connections.
func (l *live) connections() *results.Connections {
	opened, stale, resent := l.client.ConnStats()
	return &results.Connections{Opened: opened, StaleClosed: stale, Resent: resent}
}

// liveSender sends the driver's requests with the HTTP client, each on a
// goroutine of its own. Senders are kept and reused rather than started
// per request: a fresh goroutine regrows its stack through the HTTP
// client on every request, which cost 8% of the client's CPU at 10,000
// requests/s.
type liveSender struct {
	client *transport.Client
	idle   chan *driver.Flight
	wg     sync.WaitGroup
}

// Send implements driver.Sender.
func (s *liveSender) Send(ctx context.Context, f *driver.Flight) {
	select {
	case s.idle <- f:
		// Let the sender write its request on this thread now.
		// Otherwise it waits in this processor's queue while the
		// dispatcher sleeps in the kernel, and the runtime wakes another
		// thread to take both: a fifth more CPU at 5,000 arrivals a
		// second (CHANGELOG.md).
		runtime.Gosched()
	default:
		// Every sender is busy: start another, so no request ever waits
		// for a sender.
		s.wg.Add(1)
		go s.serve(ctx, f)
	}
}

// serve sends f, then every request handed to it, until closed.
func (s *liveSender) serve(ctx context.Context, f *driver.Flight) {
	defer s.wg.Done()
	for ok := true; ok; f, ok = <-s.idle {
		s.client.DoRetry(ctx, f.Request(), &f.Rec, f.KeepText)
		f.Done()
	}
}

// Abort implements driver.Sender: every connection fails at once.
func (s *liveSender) Abort() { s.client.Abort() }

// close ends the idle senders.
func (s *liveSender) close() {
	close(s.idle)
	s.wg.Wait()
}

// sliceHealth gives each of res's slices the client's verdict on itself
// over it, from the monitor's timeline (the slices count from the
// window's start, windowStart into the level's run from start), and
// warns of slices the client limited in a level it did not limit as a
// whole: a stall the level's percentiles hide can still shape a slice.
func sliceHealth(res *results.Run, mon *health.Monitor, start time.Time, windowStart time.Duration) {
	var limited []string
	for i := range res.Slices {
		sl := &res.Slices[i]
		from := start.Add(windowStart + time.Duration(sl.StartS*float64(time.Second)))
		to := start.Add(windowStart + time.Duration(sl.EndS*float64(time.Second)))
		sp := mon.Span(from, to)
		verdict, reasons := health.SpanVerdict(sp)
		if verdict == "" {
			continue
		}
		sl.Client = &results.SliceClient{Verdict: verdict, Reasons: reasons, TimerLagMaxMs: float64(sp.MaxLag) / 1e6,
			LateWakeups: sp.OverNoisy, CPUPercent: 100 * sp.CPUShare}
		if verdict == health.ClientLimited || verdict == health.HostStarved {
			limited = append(limited, fmt.Sprintf("%s (%s: %s)", sl.Span(), verdict, strings.Join(reasons, "; ")))
		}
	}
	if len(limited) > 0 && res.Health.Healthy() {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the client was healthy over the window but not in every slice: %s; those slices' latencies carry the client's own delay",
			strings.Join(limited, ", ")))
	}
}
