package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
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
	OnWindowStart func(ctx context.Context)
	OnWindowEnd   func(ctx context.Context)
	Config        results.Config
	// Goodput, when set, counts the measured turns that meet every bound.
	Goodput Goodput
	// Shard, when set, runs only this process's calls (call k when k mod
	// Count is Index); the cap on calls is split alike. StartAt, when set,
	// is the instant the call schedule starts (see Options.StartAt).
	Shard   driver.Shard
	StartAt time.Time
	// Prefixes, for SummarizeVoice, is the tracker that filled the turns'
	// PrefixShare (see Options.Prefixes); RunVoice keeps its own.
	Prefixes *workload.PrefixTracker
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
	if !(o.Rate > 0) {
		errs = append(errs, ErrNoCallRate)
	}
	switch {
	case o.Calls < 0 || o.Duration < 0 || o.MaxConcurrentCalls < 0 || o.DrainTimeout < 0:
		errs = append(errs, errors.New("counts and durations must not be negative"))
	case o.Calls == 0 && o.Duration == 0:
		// Unbounded, the arrivals would never end.
		errs = append(errs, ErrCallsUnbounded)
	}
	if err := o.Shard.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// WithAnswer is req with the server's answer as the next assistant
// message: the sequence the server holds once the turn is done.
func WithAnswer(req *workload.Request, answer []byte) *workload.Request {
	r := *req
	r.Messages = append(append([]workload.Message(nil), req.Messages...), workload.Message{Role: "assistant", Content: string(answer)})
	return &r
}

// RunVoice runs the call workload: calls arrive open loop; each sends turn
// 1 to warm its prefix, then after every gap the next turn with the full
// history. Turns 2..T are measured, from their scheduled time (the end of
// the gap). Cancelling ctx stops arrivals, cuts open turns short, and
// returns what was measured.
func RunVoice(ctx context.Context, o VoiceOptions) (*results.Run, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	arrivals, err := workload.NewArrivals(o.Rate, 1, o.Seed)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	records := record.NewWriter(o.Records, start, o.RecordLevel)
	coll := newVoiceCollector(o, 4*runtime.GOMAXPROCS(0))
	c := o.Client
	c.SetStart(start)
	stopWatch := context.AfterFunc(ctx, c.Abort)
	defer stopWatch()
	mon := health.Start(health.DefaultInterval)
	if o.OnWindowStart != nil {
		o.OnWindowStart(ctx)
	}

	var (
		inProgress, started, shed, completed atomic.Int64
		callTime                             atomic.Int64 // ns, completed calls
		sent, inflight, errs, okTurns        atomic.Int64
		warmupTurns                          atomic.Int64
		failedCalls, warmupFailed            atomic.Int64
		turnIndex                            atomic.Int64
		wg                                   sync.WaitGroup
	)
	// Sample calls in progress for the achieved concurrency.
	var samples, sampleSum int64
	var arriving atomic.Bool
	arriving.Store(true)
	sampleDone := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-sampleDone:
				return
			case <-t.C:
				// Only while calls still arrive: the drain at the end is not
				// the steady state Little's law describes.
				if arriving.Load() {
					samples++
					sampleSum += inProgress.Load()
				}
				if o.Progress != nil && time.Since(last) >= 500*time.Millisecond {
					last = time.Now()
					p50, p95 := coll.ttftP50P95()
					o.Progress(Progress{Elapsed: c.Now(), Sent: sent.Load(), OK: okTurns.Load(), InFlight: inflight.Load(), Errors: errs.Load(), TTFTP50ms: p50, TTFTP95ms: p95})
				}
			}
		}
	}()

	runCall := func(i int, arrival time.Duration) {
		defer wg.Done()
		defer inProgress.Add(-1)
		script := o.CallSource.Call(i)
		answers := make([]string, 0, script.Turns())
		sched := arrival
		var rec record.Record
		for k := 1; k <= script.Turns(); k++ {
			if k > 1 {
				sched = rec.Done + script.Gaps[k-1]
				if !sleepCtx(ctx, sched-c.Now()) {
					return
				}
			}
			if ctx.Err() != nil {
				return
			}
			req := o.CallSource.Turn(script, k, answers)
			rec.Reset()
			rec.Index = int(turnIndex.Add(1) - 1)
			rec.Tag, rec.Scheduled, rec.Warmup, rec.Origin, rec.Call = k, sched, k <= script.Warmup, arrival, i
			rec.Paused = script.PausedBefore(k)
			rec.Lateness = max(c.Now()-sched, 0)
			rec.PrefixShare = coll.prefixes.Share(&req)
			sent.Add(1)
			inflight.Add(1)
			c.DoRetry(ctx, &req, &rec, true)
			inflight.Add(-1)
			if rec.Class != "" && rec.Class != record.ClassInterrupted {
				errs.Add(1)
			} else if rec.Class == "" {
				okTurns.Add(1)
			}
			records.Write(&rec)
			if rec.Warmup {
				warmupTurns.Add(1)
			} else {
				coll.add(&rec)
			}
			if rec.Class != "" {
				if rec.Class != record.ClassInterrupted {
					failedCalls.Add(1)
					if rec.Warmup {
						warmupFailed.Add(1)
					}
				}
				return
			}
			answers = append(answers, string(rec.Text))
			// The server now holds the turn's prompt and its answer: a
			// next turn that carries that answer may hit it all.
			coll.prefixes.Share(WithAnswer(&req, rec.Text))
		}
		completed.Add(1)
		callTime.Add(int64(rec.Done - arrival))
	}

	// Dispatch call arrivals on their absolute schedule: from StartAt when
	// set (however late this process is), else from now.
	var base, late time.Duration
	if !o.StartAt.IsZero() {
		late, _ = waitUntil(ctx.Done(), o.StartAt)
		base = o.StartAt.Sub(start)
	}
	timer := time.NewTimer(time.Hour)
	phase := arrivals.Phase(o.Calls, o.Duration)
	calls := driver.NewArrivalCount(base, o.Duration, o.Shard, 0)
	callCap := o.MaxConcurrentCalls
	if callCap > 0 {
		callCap = max(o.Shard.Share(callCap), 1)
	}
	for ctx.Err() == nil {
		rel, ok := phase.Next()
		if !ok {
			break
		}
		k, mine := calls.Add(rel, int64(o.CallSource.MeasuredTurns(calls.Drawn())))
		if !mine {
			continue
		}
		rel += base
		if wait := rel - c.Now(); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				continue
			case <-timer.C:
			}
		}
		if callCap > 0 && inProgress.Load() >= int64(callCap) {
			shed.Add(1)
			continue
		}
		started.Add(1)
		inProgress.Add(1)
		wg.Add(1)
		go runCall(k, rel)
	}
	timer.Stop()
	arriving.Store(false)
	arrivalsEnd := c.Now()
	var drainCut atomic.Bool
	if o.DrainTimeout > 0 {
		t := time.AfterFunc(o.DrainTimeout, func() { drainCut.Store(true); c.Abort() })
		defer t.Stop()
	}
	wg.Wait()
	windowEnd := c.Now()
	close(sampleDone)
	sampler.Wait()
	if o.OnWindowEnd != nil && ctx.Err() == nil {
		o.OnWindowEnd(ctx)
	}
	rep := mon.Stop()
	records.Flush()

	w := calls.Window()
	offeredTurns, inWindowTurns := calls.Weights()
	t := VoiceTally{WindowStart: base, Drawn: int64(calls.Drawn()), Arrivals: w.Arrivals, InWindow: w.InWindow, Offered: w.Offered,
		OfferedTurns: offeredTurns, InWindowTurns: inWindowTurns, WarmupTurns: warmupTurns.Load(),
		Started: started.Load(), Completed: completed.Load(), Shed: shed.Load(), Failed: failedCalls.Load(), WarmupFailed: warmupFailed.Load(),
		CallTime: time.Duration(callTime.Load()), LastArrival: calls.Last(), ArrivalsEnd: arrivalsEnd, WindowEnd: windowEnd, DrainCut: drainCut.Load()}
	if samples > 0 {
		t.AchievedConcurrency = float64(sampleSum) / float64(samples)
	}
	res := voiceResult(coll, rep, o, t)
	res.StartedAt = start.UTC()
	res.WindowStartedAt = start.Add(base).UTC()
	res.Shard = shardInfo(o.Shard, o.StartAt, late)
	res.Interrupted = ctx.Err() != nil
	opened, stale, resent := c.ConnStats()
	res.Connections = &results.Connections{Opened: opened, StaleClosed: stale, Resent: resent}
	return res, nil
}

// VoiceTally is what a call workload counts beside its turns' records:
// the call arrivals and what became of them, and the window's times.
type VoiceTally struct {
	// Drawn counts the calls of the one schedule, every shard's; Arrivals
	// this shard's, and InWindow those of them inside the schedule window
	// (all, but for a window bounded by a count of calls, which ends at its
	// last arrival).
	Drawn, Arrivals, InWindow int64
	// Offered is the schedule's offered rate, by the window rules every
	// loop shares (driver.ArrivalCount.Window).
	Offered float64
	// OfferedTurns counts the measured turns of this shard's arrivals, and
	// InWindowTurns those of the calls inside the schedule window.
	OfferedTurns, InWindowTurns int64
	// WarmupTurns counts the turns sent but not measured (voice's turn 1).
	WarmupTurns              int64
	Started, Completed, Shed int64
	// Failed counts the calls a failed turn ended (a call stops at its
	// first failure), and WarmupFailed those whose failed turn was an
	// unmeasured warm-up turn, which no latency or error figure counts.
	Failed, WarmupFailed int64
	// CallTime sums the completed calls' durations, arrival to last turn.
	CallTime time.Duration
	// WindowStart is when the call schedule started on the run's clock;
	// LastArrival is the last call's offset from it (every shard's), and
	// ArrivalsEnd and WindowEnd are on the run's clock.
	WindowStart, LastArrival, ArrivalsEnd, WindowEnd time.Duration
	// AchievedConcurrency is the mean number of calls in progress while
	// calls still arrived.
	AchievedConcurrency float64
	DrainCut            bool
}

// newVoiceCollector collects the measured turns of a call workload.
func newVoiceCollector(o VoiceOptions, shards int) *collector {
	coll := newCollector(shards)
	coll.coldThreshold = o.CallSource.ColdThreshold()
	coll.prefixes = o.Prefixes
	if coll.prefixes == nil {
		coll.prefixes = workload.NewPrefixTracker()
	}
	coll.callOrigins = true
	coll.goodput = o.Goodput
	return coll
}

// SummarizeVoice builds the result of a call workload from records made
// without a client (a prediction in virtual time): the measured turns
// (2..T) in recs, the calls in t, as RunVoice builds its own.
func SummarizeVoice(recs []record.Record, o VoiceOptions, t VoiceTally) *results.Run {
	coll := newVoiceCollector(o, 1)
	for i := range recs {
		coll.add(&recs[i])
	}
	res := voiceResult(coll, health.Report{}, o, t)
	res.Health = results.Health{Verdict: results.VerdictVirtual}
	return res
}

// voiceResult builds a call workload's result from its collected turns and
// its tally.
func voiceResult(coll *collector, rep health.Report, o VoiceOptions, t VoiceTally) *results.Run {
	s := &summary{coll: coll, load: driver.Load{Rate: o.Rate}, config: o.Config}
	offered := t.Offered
	res := s.result(rep, t.WindowStart, t.WindowEnd, offered, 0)
	res.Requests.Warmup = t.WarmupTurns
	_, agg, _ := s.coll.merged()
	calls := &results.Calls{Started: t.Started, Completed: t.Completed, Shed: t.Shed, Failed: t.Failed, WarmupFailed: t.WarmupFailed,
		AchievedConcurrency: t.AchievedConcurrency}
	if span := (t.WindowEnd - t.WindowStart).Seconds(); span > 0 {
		calls.TurnsPerS = float64(agg.ok) / span
	}
	if n := t.Completed; n > 0 {
		calls.MeanCallSeconds = (t.CallTime / time.Duration(n)).Seconds()
		if a := (t.ArrivalsEnd - t.WindowStart).Seconds(); a > 0 {
			calls.LittlesLaw = littlesLaw(float64(t.Started)/a, calls.MeanCallSeconds, a)
		}
	}
	// The schedule window is [0, Duration), or [0, last arrival) for a
	// count of calls: then the last call is outside it, and its turns must
	// not be offered against completions that cannot count them (it made
	// 16 calls at 1/s read as saturated).
	schedEnd := t.LastArrival
	if o.Duration > 0 {
		schedEnd = o.Duration
	}
	if t.Arrivals > 0 {
		calls.TurnsOfferedPerS = offered * float64(t.OfferedTurns) / float64(t.Arrivals)
	}
	res.Arrivals.WindowArrivals = t.OfferedTurns
	// Turns spread by their gaps: the offer is scaled by the share a
	// server keeping up would still have in the shifted window.
	kept, share := s.coll.keptPaceEdges(t.WindowStart, t.WindowStart+schedEnd)
	res.Arrivals.CompletionRate = completionRate(kept, int64(math.Round(float64(t.InWindowTurns)*share)), calls.TurnsOfferedPerS)
	if first, last, ok := s.coll.queueTrend(t.WindowStart, t.WindowStart+schedEnd); ok {
		// From each call's arrival: a queue that grows stretches the calls.
		res.Arrivals.AgeFirstThirdMs, res.Arrivals.AgeLastThirdMs = ms(first), ms(last)
	}
	res.Calls = calls
	res.Warnings = append(res.Warnings, results.SmallPrint(res)...)
	if warn := shortWindow(o.Duration, "mean call", calls.MeanCallSeconds, calls.Completed, "calls"); warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	if t.DrainCut {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the drain timeout (%s) cut calls still in progress after the arrivals ended: their open turns count as interrupted", o.DrainTimeout))
	}
	cache := &results.Cache{Reported: agg.cachedReported}
	if res.Cache != nil {
		cache.Expected = res.Cache.Expected
	}
	if agg.inTotal > 0 {
		cache.HitRate = float64(agg.cachedTotal) / float64(agg.inTotal)
	}
	if agg.measuredTurns > 0 {
		cache.ColdShare = float64(agg.coldTurns) / float64(agg.measuredTurns)
		cache.ColdTurns, cache.Turns = agg.coldTurns, agg.measuredTurns
	}
	res.Cache = cache
	if !agg.cachedReported && agg.ok > 0 {
		res.Warnings = append(res.Warnings, CachedTokensMissing)
	}
	if t.Shed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d call arrivals were shed at the --max-concurrent-calls cap of %d", t.Shed, o.MaxConcurrentCalls))
	}
	return res
}

// CachedTokensMissing is the explanation given when a server never reports
// cached tokens, instead of a hit rate of 0.
const CachedTokensMissing = "the server never reported usage.prompt_tokens_details.cached_tokens, so the cache-hit rate is unknown " +
	"(not 0): start vLLM with --enable-prompt-tokens-details, or SGLang with --enable-cache-report"

// littlesLaw is the mean number of calls in progress over a span of a
// seconds that starts empty, for calls arriving at lambda per second and
// lasting w seconds: λw in the steady state, less the ramp of the first w
// seconds, when the calls in progress grow from none (λw(1 − w/2a)), or
// λa/2 for a span no longer than a call. The sampled mean is set against
// this, not against the steady state a short window never reaches.
func littlesLaw(lambda, w, a float64) float64 {
	if a <= w {
		return lambda * a / 2
	}
	return lambda * w * (1 - w/(2*a))
}
