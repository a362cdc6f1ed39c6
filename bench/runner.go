package bench

import (
	"context"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// Progress is a live snapshot of a running phase.
type Progress struct {
	Elapsed              time.Duration
	Sent, OK, Errors     int64
	InFlight             int64
	TTFTP50ms, TTFTP95ms float64
}

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
	// OnWindowStart, when set, runs after warm-up finished and before the
	// measured window starts (e.g. to reset the server's summary).
	OnWindowStart func(ctx context.Context)
	// OnWindowEnd, when set, runs after the window drained.
	OnWindowEnd func(ctx context.Context)
	// Config is copied into the result.
	Config results.Config
	// Goodput, when set, counts the requests that meet every bound.
	Goodput Goodput
	// StartAt, when set, is the wall instant the measured window starts:
	// shards of one load all start their schedule then, after their own
	// warm-up. A run that is not ready by then starts late, its arrivals
	// due from StartAt all the same, and reports by how much.
	StartAt time.Time
	// Prefixes, for Summarize, is the tracker that filled the records'
	// PrefixShare, so the result states the cache hit the workload
	// expects; Run keeps its own.
	Prefixes *workload.PrefixTracker
	// NoHistograms leaves the encoded histograms out of the result: for
	// results only compared and never written (a calibration's replays),
	// where compressing them is most of the summary's cost.
	NoHistograms bool
}

// sleepCtx waits for d, or until ctx ends; it reports whether the wait ran
// its course.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// runner is the state of one Run.
type runner struct {
	opts     Options
	client   *transport.Client
	coll     *collector
	arrivals *workload.Arrivals
	// trace, when the load replays one, gives the window's arrivals.
	trace    *workload.Arrivals
	records  *record.Writer
	sent     atomic.Int64
	inflight atomic.Int64
	errs     atomic.Int64
	ok       atomic.Int64
	recPool  sync.Pool
	// drawn counts the open loop's arrivals drawn from the one schedule,
	// every shard's, across phases: arrival k is request k.
	drawn int
	// base is the global index of the phase's first closed-loop request,
	// and windowBase, when hasWindowBase, the run-clock offset the measured
	// window's schedule starts from (StartAt): negative for a process that
	// started after StartAt, whose arrivals already due go out at once,
	// measured from when they were due.
	base          int
	windowBase    time.Duration
	hasWindowBase bool
}

// Run executes the load: warm-up, the measured window, and the drain of
// stragglers. Cancelling ctx stops sending, cuts in-flight requests short
// and still returns everything measured so far, with Interrupted set.
func Run(ctx context.Context, o Options) (*results.Run, error) {
	if err := o.Load.Validate(); err != nil {
		return nil, err
	}
	r := &runner{opts: o, client: o.Client, coll: newCollector(4 * runtime.GOMAXPROCS(0))}
	r.coll.goodput = o.Goodput
	r.coll.prefixes = workload.NewPrefixTracker()
	r.recPool.New = func() any { return &record.Record{} }
	start := time.Now()
	r.records = record.NewWriter(o.Records, start, o.RecordLevel)
	if o.Load.Rate > 0 {
		a, err := workload.NewArrivals(o.Load.Rate, o.Load.Burstiness, o.Load.Seed)
		if err != nil {
			return nil, err
		}
		r.arrivals = a
	}
	if o.Load.Trace != nil {
		r.trace = workload.NewTraceArrivals(o.Load.Trace)
	}
	r.client.SetStart(start)
	stopWatch := context.AfterFunc(ctx, r.client.Abort)
	defer stopWatch()
	mon := health.Start(health.DefaultInterval)
	stopProgress := r.startProgress(ctx)

	warm := o.Load.DefaultWarmup()
	if warm > 0 {
		r.phase(ctx, warm, 0, false)
	}
	var window struct{ start, end time.Duration }
	var pr phaseResult
	var late time.Duration
	if !o.StartAt.IsZero() && ctx.Err() == nil {
		late, _ = waitUntil(ctx.Done(), o.StartAt)
		r.windowBase, r.hasWindowBase = o.StartAt.Sub(start), true
	}
	r.base = warm
	if ctx.Err() == nil {
		if o.OnWindowStart != nil {
			o.OnWindowStart(ctx)
		}
		window.start = r.client.Now()
		if o.Load.Rate > 0 && r.hasWindowBase {
			// The schedule's window started at StartAt, however late this
			// process came to it: its arrivals are all in it.
			window.start = min(window.start, r.windowBase)
		}
		pr = r.phase(ctx, o.Load.Requests, o.Load.Duration, true)
		window.end = r.client.Now()
		if o.OnWindowEnd != nil && ctx.Err() == nil {
			o.OnWindowEnd(ctx)
		}
	}
	stopProgress()
	rep := mon.Stop()
	r.records.Flush()
	res := r.summary().windowResult(rep, driver.Window{Start: window.start, End: window.end, Offered: pr.offered, Arrivals: pr.arrivals, InWindow: pr.inWindow,
		Unsent: pr.unsent, SchedStart: pr.schedStart, SchedEnd: pr.schedEnd, Warmup: o.Load.Shard.Share(warm), DrainCut: pr.drainCut})
	r.connections(res)
	res.StartedAt = start.UTC()
	res.WindowStartedAt = start.Add(window.start).UTC()
	res.Shard = shardInfo(o.Load.Shard, o.StartAt, late)
	res.Interrupted = ctx.Err() != nil
	return res, nil
}

// WarmupRequest is warm-up request idx: the workload's request opened by
// a tag no measured request has, so warming the server (its connections,
// its kernels) never warms the prefix cache a measured request then hits.
func WarmupRequest(req workload.Request, idx int) workload.Request {
	return workload.Unmeasured(req, "[knee warm-up "+strconv.Itoa(idx)+"]")
}

// connections adds what happened to the client's connections.
func (r *runner) connections(res *results.Run) {
	opened, stale, resent := r.client.ConnStats()
	res.Connections = &results.Connections{Opened: opened, StaleClosed: stale, Resent: resent}
}

func (r *runner) startProgress(ctx context.Context) func() {
	if r.opts.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				p50, p95 := r.coll.ttftP50P95()
				r.opts.Progress(Progress{
					Elapsed: r.client.Now(), Sent: r.sent.Load(), OK: r.ok.Load(), InFlight: r.inflight.Load(),
					Errors: r.errs.Load(), TTFTP50ms: p50, TTFTP95ms: p95,
				})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// phaseResult is what a phase reports beyond its records.
type phaseResult struct {
	// offered is the rate of the arrivals drawn for the window (open loop).
	offered float64
	// unsent counts arrivals due inside the window that were still waiting
	// for a --max-concurrency slot when it closed.
	unsent int64
	// drainCut is set when the drain timeout cut the phase's stragglers.
	drainCut bool
	// schedStart and schedEnd bound the window's schedule (open loop):
	// arrivals due in [schedStart, schedEnd) belong to it.
	schedStart, schedEnd time.Duration
	// arrivals counts this shard's arrivals drawn for the window, sent or
	// not, and inWindow those of them due inside [schedStart, schedEnd).
	arrivals, inWindow int64
}

// phase sends n requests (or sends for d) and waits for all to finish. The
// measured phase's stragglers get Load.DrainTimeout after the sending ends;
// whatever is still running then is cut and counted as interrupted.
func (r *runner) phase(ctx context.Context, n int, d time.Duration, measured bool) phaseResult {
	var pr phaseResult
	var cut atomic.Bool
	// drain arms the cut: DrainTimeout after the window's end, which is
	// windowEnd (an offset of the run's clock) or now when that is zero.
	drain := func(windowEnd time.Duration) (stop func()) {
		if !measured || r.opts.Load.DrainTimeout <= 0 {
			return func() {}
		}
		after := r.opts.Load.DrainTimeout
		if windowEnd > 0 {
			after += max(windowEnd-r.client.Now(), 0)
		}
		t := time.AfterFunc(after, func() {
			cut.Store(true)
			r.client.Abort()
		})
		return func() { t.Stop() }
	}
	if r.opts.Load.Concurrency > 0 {
		r.closedLoop(ctx, n, d, measured, drain)
	} else {
		r.openLoop(ctx, n, d, measured, drain, &pr)
	}
	pr.drainCut = cut.Load()
	return pr
}

// one sends request idx, scheduled at sched, and records it.
func (r *runner) one(ctx context.Context, idx int, sched, lateness time.Duration, waited, measured bool) {
	req := r.opts.Source.Request(idx)
	if !measured {
		req = WarmupRequest(req, idx)
	}
	rec := r.recPool.Get().(*record.Record)
	rec.Reset()
	rec.Index, rec.Warmup, rec.Tag = idx, !measured, req.Tag
	rec.Scheduled, rec.Lateness, rec.Waited = sched, lateness, waited
	if measured {
		rec.PrefixShare = r.coll.prefixes.Share(&req)
	}
	r.sent.Add(1)
	r.inflight.Add(1)
	r.client.DoRetry(ctx, &req, rec, false)
	r.inflight.Add(-1)
	if rec.Class != "" && rec.Class != record.ClassInterrupted {
		r.errs.Add(1)
	} else if rec.Class == "" {
		r.ok.Add(1)
	}
	r.finish(rec, measured)
	r.recPool.Put(rec)
}

// finish writes a record out and adds it to the statistics.
func (r *runner) finish(rec *record.Record, measured bool) {
	r.records.Write(rec)
	if measured {
		r.coll.add(rec)
	}
}
