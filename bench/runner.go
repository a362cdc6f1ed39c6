package bench

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// Load says how much to send and when.
type Load struct {
	// Concurrency > 0 selects a closed loop of that many workers.
	Concurrency int
	// Rate > 0 selects an open loop with arrivals at Rate per second.
	Rate       float64
	Burstiness float64
	// MaxConcurrency caps requests in flight in open loop; an arrival that
	// finds every slot busy waits, and the wait is measured.
	MaxConcurrency int
	// Requests or Duration bounds the measured window.
	Requests int
	Duration time.Duration
	// Warmup unmeasured requests are sent and finished before the window;
	// a negative value means one per concurrent stream.
	Warmup int
	Seed   uint64
}

// DefaultWarmup is the warm-up count used when Load.Warmup is negative:
// one request per concurrent stream.
func (l Load) DefaultWarmup() int {
	if l.Warmup >= 0 {
		return l.Warmup
	}
	if l.Concurrency > 0 {
		return l.Concurrency
	}
	if l.MaxConcurrency > 0 {
		return l.MaxConcurrency
	}
	return 1
}

// Validate reports every problem with l at once.
func (l Load) Validate() error {
	var errs []error
	if (l.Concurrency > 0) == (l.Rate > 0) {
		errs = append(errs, errors.New("give exactly one of --concurrency and --rate"))
	}
	if l.Concurrency < 0 || l.Rate < 0 || l.MaxConcurrency < 0 || l.Requests < 0 || l.Duration < 0 {
		errs = append(errs, errors.New("counts, rates and durations must not be negative"))
	}
	if l.Rate > 0 && l.Burstiness <= 0 {
		errs = append(errs, errors.New("burstiness must be positive"))
	}
	if l.Requests == 0 && l.Duration == 0 {
		errs = append(errs, errors.New("give --requests or --duration"))
	}
	return errors.Join(errs...)
}

// PoolSize is the number of connections the load needs.
func (l Load) PoolSize() int {
	switch {
	case l.Concurrency > 0:
		return l.Concurrency
	case l.MaxConcurrency > 0:
		return l.MaxConcurrency
	}
	return 16384
}

// Progress is a live snapshot of a running phase.
type Progress struct {
	Elapsed   time.Duration
	Sent      int64
	InFlight  int64
	Errors    int64
	TTFTP95ms float64
}

// Options configures Run.
type Options struct {
	Client *Client
	Source workload.Source
	Load   Load
	// Records, when set, receives one JSON line per request.
	Records io.Writer
	// Progress, when set, is called about twice a second.
	Progress func(Progress)
	// OnWindowStart, when set, runs after warm-up finished and before the
	// measured window starts (e.g. to reset the server's summary).
	OnWindowStart func(ctx context.Context)
	// OnWindowEnd, when set, runs after the window drained.
	OnWindowEnd func(ctx context.Context)
	// Config is copied into the result.
	Config results.Config
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
	client   *Client
	coll     *collector
	arrivals *workload.Arrivals
	records  *recordWriter
	sent     atomic.Int64
	inflight atomic.Int64
	errs     atomic.Int64
	index    atomic.Int64
	recPool  sync.Pool
}

// Run executes the load: warm-up, the measured window, and the drain of
// stragglers. Cancelling ctx stops sending, cuts in-flight requests short
// and still returns everything measured so far, with Interrupted set.
func Run(ctx context.Context, o Options) (*results.Run, error) {
	if err := o.Load.Validate(); err != nil {
		return nil, err
	}
	r := &runner{opts: o, client: o.Client, coll: newCollector(4 * runtime.GOMAXPROCS(0))}
	r.recPool.New = func() any { return &Record{} }
	r.records = newRecordWriter(o.Records)
	if o.Load.Rate > 0 {
		a, err := workload.NewArrivals(o.Load.Rate, o.Load.Burstiness, o.Load.Seed)
		if err != nil {
			return nil, err
		}
		r.arrivals = a
	}
	start := time.Now()
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
	offered := 0.0
	if ctx.Err() == nil {
		if o.OnWindowStart != nil {
			o.OnWindowStart(ctx)
		}
		window.start = r.client.now()
		offered = r.phase(ctx, o.Load.Requests, o.Load.Duration, true)
		window.end = r.client.now()
		if o.OnWindowEnd != nil && ctx.Err() == nil {
			o.OnWindowEnd(ctx)
		}
	}
	stopProgress()
	rep := mon.Stop()
	r.records.flush()
	res := r.result(rep, window.start, window.end, offered, warm)
	res.StartedAt = start.UTC()
	res.Interrupted = ctx.Err() != nil
	return res, nil
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
				r.opts.Progress(Progress{
					Elapsed:   r.client.now(),
					Sent:      r.sent.Load(),
					InFlight:  r.inflight.Load(),
					Errors:    r.errs.Load(),
					TTFTP95ms: r.coll.ttftP95(),
				})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// phase sends n requests (or sends for d) and waits for all to finish. It
// returns the offered rate of the arrivals it drew (open loop).
func (r *runner) phase(ctx context.Context, n int, d time.Duration, measured bool) float64 {
	if r.opts.Load.Concurrency > 0 {
		r.closedLoop(ctx, n, d, measured)
		return 0
	}
	return r.openLoop(ctx, n, d, measured)
}

// closedLoop runs Concurrency workers, each sending its next request as soon
// as its previous one ends.
func (r *runner) closedLoop(ctx context.Context, n int, d time.Duration, measured bool) {
	var issued atomic.Int64
	start := r.client.now()
	var wg sync.WaitGroup
	for w := 0; w < r.opts.Load.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if n > 0 && issued.Add(1) > int64(n) {
					return
				}
				now := r.client.now()
				if d > 0 && now-start >= d {
					return
				}
				r.one(ctx, now, 0, false, measured)
			}
		}()
	}
	wg.Wait()
}

// openLoop dispatches arrivals at their absolute scheduled times.
func (r *runner) openLoop(ctx context.Context, n int, d time.Duration, measured bool) float64 {
	var slots chan struct{}
	if mc := r.opts.Load.MaxConcurrency; mc > 0 {
		slots = make(chan struct{}, mc)
	}
	var wg sync.WaitGroup
	base := r.client.now()
	var first time.Duration = -1
	var last time.Duration
	count := 0
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	// Senders are kept and reused rather than started per arrival: a fresh
	// goroutine regrows its stack through the HTTP client on every
	// request, which cost 8% of the client's CPU at 10,000 requests/s.
	idle := make(chan arrival)
	send := func(a arrival) {
		defer wg.Done()
		for {
			r.one(ctx, a.due, a.lateness, a.waited, measured)
			if slots != nil {
				<-slots
			}
			var ok bool
			if a, ok = <-idle; !ok {
				return
			}
		}
	}
	for ctx.Err() == nil {
		if n > 0 && count >= n {
			break
		}
		off := r.arrivals.Next()
		if first < 0 {
			first = off
		}
		rel := off - first
		if d > 0 && rel >= d {
			break
		}
		last = rel
		count++
		due := base + rel
		if wait := due - r.client.now(); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				continue
			case <-timer.C:
			}
		}
		lateness := r.client.now() - due
		waited := false
		if slots != nil {
			select {
			case slots <- struct{}{}:
			default:
				waited = true
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					continue
				}
			}
		}
		a := arrival{due: due, lateness: lateness, waited: waited}
		select {
		case idle <- a:
		default:
			// Every sender is busy: start another, so no arrival ever
			// waits for a sender (only for a --max-concurrency slot,
			// which is measured).
			wg.Add(1)
			go send(a)
		}
	}
	close(idle)
	wg.Wait()
	if count < 2 || last <= 0 {
		return 0
	}
	return float64(count-1) / last.Seconds()
}

// arrival is one scheduled request handed to a sender.
type arrival struct {
	due, lateness time.Duration
	waited        bool
}

// one sends a single request scheduled at sched and records it.
func (r *runner) one(ctx context.Context, sched, lateness time.Duration, waited, measured bool) {
	idx := int(r.index.Add(1) - 1)
	req := r.opts.Source.Request(idx)
	rec := r.recPool.Get().(*Record)
	rec.reset()
	rec.Index, rec.Warmup, rec.Tag = idx, !measured, req.Tag
	rec.Scheduled, rec.Lateness, rec.Waited = sched, lateness, waited
	r.sent.Add(1)
	r.inflight.Add(1)
	r.client.DoRetry(ctx, &req, rec, false)
	r.inflight.Add(-1)
	if rec.Class != "" && rec.Class != ClassInterrupted {
		r.errs.Add(1)
	}
	r.finish(rec, measured)
	r.recPool.Put(rec)
}

// finish writes a record out and adds it to the statistics.
func (r *runner) finish(rec *Record, measured bool) {
	r.records.write(rec)
	if measured {
		r.coll.add(rec)
	}
}
