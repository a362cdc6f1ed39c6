package bench

import (
	"fmt"
	"math"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
)

// Summary collects a level's measured records as they end and builds its
// result exactly as Run and RunVoice build theirs: the same histograms,
// throughput, saturation tests and small print. It is for a level run
// without a live client (a prediction in virtual time), so client health
// is marked virtual rather than judged.
type Summary struct {
	s     *summary
	voice VoiceOptions
}

// NewSummary is the summary of a level of requests: its load and config,
// goodput bounds and prefix tracker are o's.
func NewSummary(o Options) *Summary {
	s := &summary{coll: newCollector(1), load: o.Load, config: o.Config, noHistograms: o.NoHistograms}
	s.coll.goodput = o.Goodput
	s.coll.prefixes = o.Prefixes
	return &Summary{s: s}
}

// NewCallSummary is the summary of a level of calls.
func NewCallSummary(o VoiceOptions) *Summary {
	return &Summary{s: &summary{coll: newVoiceCollector(o, 1)}, voice: o}
}

// Add collects a measured record (driver.Options.Measured).
func (s *Summary) Add(r *record.Record) { s.s.coll.add(r) }

// Result is a level of requests' result, for its window.
func (s *Summary) Result(w driver.Window) *results.Run {
	res := s.s.windowResult(health.Report{}, w)
	res.Health = results.Health{Verdict: results.VerdictVirtual}
	return res
}

// CallResult is a level of calls' result, for its tally.
func (s *Summary) CallResult(t driver.CallTally) *results.Run {
	res := voiceResult(s.s.coll, health.Report{}, s.voice, t)
	res.Health = results.Health{Verdict: results.VerdictVirtual}
	return res
}

// windowResult builds the result of a measured window: the statistics,
// the saturation test against the window's own arrivals, and what a reader
// must know about them.
func (s *summary) windowResult(rep health.Report, w driver.Window) *results.Run {
	if s.load.Rate > 0 && s.load.Duration > 0 {
		// An open loop's window is its schedule's whole span, however
		// early the last request finished: 11 requests of a 20 s window
		// are 0.55/s, not 11 over the 15 s until the last completion.
		w.End = max(w.End, w.SchedEnd)
	}
	res := s.result(rep, w.Start, w.End, w.Offered, w.Warmup)
	if s.load.Rate > 0 {
		res.Arrivals.WindowArrivals = w.Arrivals
		res.Arrivals.CompletionRate = completionRate(s.coll.keptPace(w.SchedStart, w.SchedEnd), w.InWindow, w.Offered)
		if first, last, ok := s.coll.queueTrend(w.SchedStart, w.SchedEnd); ok {
			res.Arrivals.AgeFirstThirdMs, res.Arrivals.AgeLastThirdMs = ms(first), ms(last)
		}
	}
	res.Arrivals.Unsent = w.Unsent
	res.Warnings = append(res.Warnings, results.SmallPrint(res)...)
	if w.Unsent > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d arrivals due in the window were still waiting for a --max-concurrency slot when it closed: never sent", w.Unsent))
	}
	if warn := shortWindow(s.load.Duration, "E2E p99", res.Stats.E2E.P99/1000, res.Stats.E2E.Count, "requests"); s.load.Rate > 0 && warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	if w.DrainCut {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the drain timeout (%s) cut %d requests still running after the window: counted as interrupted; "+
			"the slowest requests are missing from the percentiles, which read low", s.load.DrainTimeout, res.Requests.Interrupted))
	}
	return res
}

// minWindowMultiple is how many times its longest requests (or calls) a
// window must be for its throughput to be read: shorter, the requests
// that straddle its edges weigh on it, and a queue building slowly does
// not show yet.
const minWindowMultiple = 3

// shortWindow warns when a window bounded by time (d) is under
// minWindowMultiple times long (seconds, the figure named what). n is how
// many samples the figure has; nothing is said without any.
func shortWindow(d time.Duration, what string, long float64, n int64, units string) string {
	if d <= 0 || n == 0 || !(long > 0) || d.Seconds() >= minWindowMultiple*long {
		return ""
	}
	need := time.Duration(math.Ceil(minWindowMultiple*long)) * time.Second
	return fmt.Sprintf("the window (%s) is under %d times the longest %s (%s %.1f s): those straddling its edges weigh on its throughput, "+
		"and a queue that builds slowly may not show yet; a window of at least %s reads this level reliably", d, minWindowMultiple, units, what, long, need)
}

// ms is a duration in milliseconds, as results carry them.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
