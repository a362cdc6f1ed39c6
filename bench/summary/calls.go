package summary

import (
	"fmt"
	"math"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
)

// Calls is a level of calls' result, for its tally and the client's
// health report (see Requests).
func (s *Summary) Calls(rep health.Report, t driver.CallTally) *results.Run {
	o := s.level.Calls
	offered := t.Offered
	if o.Concurrency > 0 {
		// A closed loop offers nothing: its slots start calls as they end.
		offered = 0
	}
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
	if t.Arrivals > 0 && offered > 0 {
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
