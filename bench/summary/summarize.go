package summary

import (
	"fmt"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// Level is what a summary knows of the level it summarises.
type Level struct {
	// Load is a level of requests' load; Calls, when set, makes the level
	// one of calls, arriving as it says.
	Load  driver.Load
	Calls *driver.CallLoad
	// ColdThreshold, for calls, is the cached tokens under which a
	// measured turn found its prefix cold (0: not judged).
	ColdThreshold int
	// Config is copied into the result.
	Config results.Config
	// Goodput, when set, counts the requests that meet every bound.
	Goodput Goodput
	// Slice, when set, cuts a level of requests' window into slices of
	// this width, each with its own figures (results.Slice);
	// SliceHistograms keeps each slice's latency histograms too, for a
	// shard whose slices a merge joins.
	Slice           time.Duration
	SliceHistograms bool
	// Prefixes is the tracker that filled the records' PrefixShare, so the
	// result states the cache hit the workload expects.
	Prefixes *workload.PrefixTracker
	// NoHistograms leaves the encoded histograms out of the result: for
	// results only compared and never written (a calibration's replays),
	// where compressing them is most of the summary's cost.
	NoHistograms bool
	// TemplateTokens is what the server adds around a message's text, as
	// probed (0: not known): what a prefix cache may hold beyond what the
	// prompts share.
	TemplateTokens int
	// Classes, for a mix, are its classes: the result carries each one's
	// summary beside the whole level's.
	Classes []Class
}

// Summary collects a level's measured records as they end, from many
// goroutines at once, and builds the level's result: histograms,
// throughput, the saturation tests, the cache hit, client health and the
// small print. A live run and its prediction are summarised alike.
type Summary struct {
	coll    *collector
	level   Level
	classes *classSummaries
}

// New is the summary of a level; shards spreads its records over that many
// locks, for a live level's concurrent ends (1 for one goroutine).
func New(l Level, shards int) *Summary {
	c := newCollector(max(shards, 1))
	c.goodput, c.prefixes = l.Goodput, l.Prefixes
	if l.Calls != nil {
		c.coldThreshold, c.callOrigins = l.ColdThreshold, true
		l.Load = driver.Load{Rate: l.Calls.Rate}
	}
	s := &Summary{coll: c, level: l}
	if len(l.Classes) > 0 {
		s.classes = newClassSummaries(l, shards)
	}
	return s
}

// SetOrigin sets the window's start, before any of its records is added
// (driver.Requests.OnBase): the slices' counts are cut on a grid from it.
func (s *Summary) SetOrigin(base time.Duration) { s.coll.origin.Store(int64(base)) }

// Add collects a measured record (driver.Options.Measured).
func (s *Summary) Add(r *record.Record) {
	s.coll.add(r)
	if s.classes != nil {
		s.classes.add(r)
	}
}

// Live is a level's latencies so far, in microseconds, for a live view:
// TTFT from the schedule, and for a detailed view ITL and how late sends
// were (nil otherwise).
type Live struct {
	TTFTSched, ITL, Lateness *hdrhistogram.Histogram
}

// NewLive returns empty histograms for Summary.Live to fill: TTFT only,
// or all three when detail is asked.
// They hold two significant figures, not the summary's three: 1% is
// precise enough to watch, and an eighth of the size is what a progress
// beat then copies and clears.
func NewLive(detail bool) *Live {
	h := func() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMaxMicros, 2) }
	if !detail {
		return &Live{TTFTSched: h()}
	}
	return &Live{TTFTSched: h(), ITL: h(), Lateness: h()}
}

// Live fills into's histograms with the measured requests so far. It
// takes each shard's lock for a merge per histogram, twice a second in a
// live view: the load loop is never held longer than that.
func (s *Summary) Live(into *Live) { s.coll.live(into) }

// Requests is a level of requests' result, for its window and the
// client's health report (the zero report for a prediction, whose verdict
// the caller sets).
func (s *Summary) Requests(rep health.Report, w driver.Window) *results.Run {
	res := s.windowResult(rep, w)
	if s.classes != nil {
		res.Classes = s.classes.results(rep, w)
	}
	return res
}

// windowResult builds the result of a measured window: the statistics,
// the saturation test against the window's own arrivals, and what a reader
// must know about them.
func (s *Summary) windowResult(rep health.Report, w driver.Window) *results.Run {
	if s.level.Load.Rate > 0 && s.level.Load.Duration > 0 {
		// An open loop's window is its schedule's whole span, however
		// early the last request finished: 11 requests of a 20 s window
		// are 0.55/s, not 11 over the 15 s until the last completion.
		w.End = max(w.End, w.SchedEnd)
	}
	res := s.result(rep, w.Start, w.End, w.Offered, w.Warmup)
	if s.level.Load.Rate > 0 {
		res.Arrivals.WindowArrivals = w.Arrivals
		res.Arrivals.CompletionRate = completionRate(s.coll.keptPace(w.SchedStart, w.SchedEnd), w.InWindow, w.Offered)
		if first, last, ok := s.coll.queueTrend(w.SchedStart, w.SchedEnd); ok {
			res.Arrivals.AgeFirstThirdMs, res.Arrivals.AgeLastThirdMs = ms(first), ms(last)
		}
	}
	res.Arrivals.Unsent = w.Unsent
	res.Requests.Ramp, res.Requests.RampRunning = w.RampSent, w.RampRunning
	if width := s.level.Slice; width > 0 {
		res.SliceS, res.Slices = width.Seconds(), s.coll.slices(w.Start, w.End, width, s.level.SliceHistograms)
		if trend := sliceTrend(res.Slices); trend != "" {
			res.Warnings = append(res.Warnings, trend)
		}
	}
	res.Warnings = append(res.Warnings, results.SmallPrint(res)...)
	if w.Unsent > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s due in the window %s still waiting for a --max-concurrency slot when it closed: never sent", results.Plural(w.Unsent, "arrival"), results.WasWere(w.Unsent)))
	}
	if warn := shortWindow(s.level.Load.Duration, "E2E p99", res.Stats.E2E.P99/1000, res.Stats.E2E.Count, "requests"); s.level.Load.Rate > 0 && warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	if w.DrainCut {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the drain timeout (%s) cut %s still running after the window: counted as interrupted; "+
			"the slowest requests are missing from the percentiles, which read low", s.level.Load.DrainTimeout, results.Plural(res.Requests.Interrupted, "request")))
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
