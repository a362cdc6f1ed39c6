package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
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
	coll := newVoiceCollector(o, 4*runtime.GOMAXPROCS(0))
	l := newLive(o.Client, start, records, coll)
	defer l.close()
	mon := health.Start(health.DefaultInterval)
	stopProgress := l.startProgress(ctx, o.Progress)
	out, err := l.driver.RunCalls(ctx, driver.Calls{Load: o.CallLoad(), Source: o.CallSource, StartAt: o.StartAt,
		OnWindowStart: o.OnWindowStart, OnWindowEnd: o.OnWindowEnd})
	stopProgress()
	rep := mon.Stop()
	records.Flush()
	if err != nil {
		return nil, err
	}
	res := voiceResult(coll, rep, o, out.Tally)
	res.StartedAt = start.UTC()
	res.WindowStartedAt = start.Add(out.Tally.WindowStart).UTC()
	res.Shard = shardInfo(o.Shard, o.StartAt, out.Late)
	res.Interrupted = ctx.Err() != nil
	res.Connections = l.connections()
	return res, nil
}

// CallLoad is how o's calls arrive, as the driver takes it.
func (o VoiceOptions) CallLoad() driver.CallLoad {
	return driver.CallLoad{Rate: o.Rate, Calls: o.Calls, Duration: o.Duration, MaxConcurrentCalls: o.MaxConcurrentCalls,
		Seed: o.Seed, DrainTimeout: o.DrainTimeout, Shard: o.Shard}
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

// voiceResult builds a call workload's result from its collected turns and
// its tally.
func voiceResult(coll *collector, rep health.Report, o VoiceOptions, t driver.CallTally) *results.Run {
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
