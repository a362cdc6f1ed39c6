package serverview

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/kneebench/knee/results"
)

// gaugeSample is the gauges read at one instant, by knee's names
// ("running", "waiting", "kv_cache_usage").
type gaugeSample struct {
	at     time.Time
	values map[string]float64
}

// maxTimeline bounds the samples kept: a day of one a second.
const maxTimeline = 86_400

// fillSlices gives each of res's time slices the gauges last sampled in
// it, and warns when the server's queue grew through the window. A slice
// no sample fell in (narrower than the interval between samples, or a
// scrape that failed) has none.
func (v *View) fillSlices(res *results.Run) {
	v.mu.Lock()
	timeline := v.timeline
	v.mu.Unlock()
	if len(timeline) == 0 || len(res.Slices) == 0 || res.WindowStartedAt.IsZero() {
		return
	}
	placeSamples(res.Slices, res.WindowStartedAt, timeline, v.sampleEvery)
	if warn := queueTrend(res.Slices, v.waitingMetric()); warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
}

// placeSamples gives each slice the reading of its end: the last sample
// whose instant, from start, falls in (StartS+tol, EndS+tol], where tol
// is half the sampling interval or of the slice, the narrower. A sampler
// ticking just after each second would otherwise read every slice's
// start. The timeline is in order.
func placeSamples(ss []results.Slice, start time.Time, timeline []gaugeSample, every time.Duration) {
	next := 0
	for i := range ss {
		sl := &ss[i]
		tol := min(every.Seconds(), sl.EndS-sl.StartS) / 2
		var last *gaugeSample
		for next < len(timeline) {
			at := timeline[next].at.Sub(start).Seconds()
			if at > sl.EndS+tol {
				break
			}
			if at > sl.StartS+tol {
				last = &timeline[next]
			}
			next++
		}
		if last == nil {
			continue
		}
		sl.Server = last.gauges(start)
	}
}

// gauges is the sample as a slice's reading, its instant from start.
func (s *gaugeSample) gauges(start time.Time) *results.SliceGauges {
	g := &results.SliceGauges{AtS: s.at.Sub(start).Seconds()}
	for name, field := range map[string]**float64{"running": &g.Running, "waiting": &g.Waiting, "kv_cache_usage": &g.KVCacheUsage} {
		if val, ok := s.values[name]; ok {
			*field = &val
		}
	}
	return g
}

// LatestGauges is the gauges' last reading in the window so far, its
// instant from start, for a live view; ok is false before the first, or
// when the last is older than three sampling intervals (the scrapes
// stopped working, or the window ended).
func (v *View) LatestGauges(start time.Time) (g *results.SliceGauges, ok bool) {
	v.mu.Lock()
	last := v.latest
	v.mu.Unlock()
	if last.at.IsZero() || time.Since(last.at) > 3*v.sampleEvery {
		return nil, false
	}
	return last.gauges(start), true
}

// waitingMetric is the engine's name for its queue gauge.
func (v *View) waitingMetric() string {
	kind := v.kind
	if kind == "knee-sim" {
		kind = "vllm"
	}
	if names := gaugeNames[kind]["waiting"]; len(names) > 0 {
		return names[0]
	}
	return "waiting"
}

// minQueueGrowth is the fewest requests the queue must have grown by for
// the trend to be named: a queue of 0 then 2 is noise, not a backlog.
const minQueueGrowth = 5

// queueTrend says when the server's queue grew through the window: over
// the whole slices that requests were due in (the drain after the
// arrivals empties the queue by design) and that have a waiting gauge,
// waiting rank-correlates with time (Kendall's tau 0.6 or more, about
// Spearman's 0.8, the bar the latency trend uses) and the last third's
// median is at least twice the first third's and minQueueGrowth more. ""
// when it did not.
func queueTrend(ss []results.Slice, metric string) string {
	if len(ss) == 0 {
		return ""
	}
	width := ss[0].EndS - ss[0].StartS
	var xs, ys []float64
	for i, s := range ss {
		whole := s.EndS-s.StartS >= 0.999*width
		if whole && s.Sent > 0 && s.Server != nil && s.Server.Waiting != nil {
			xs, ys = append(xs, float64(i)), append(ys, *s.Server.Waiting)
		}
	}
	if len(ys) < 4 {
		return ""
	}
	third := len(ys) / 3
	first, last := medianOf(ys[:third]), medianOf(ys[len(ys)-third:])
	if last < 2*first || last < first+minQueueGrowth || !(stat.Kendall(xs, ys, nil) >= 0.6) {
		return ""
	}
	return fmt.Sprintf("the server's queue grew through the window: %s was %.0f at the end of its first slices, %.0f at its last: the server completed less than arrived, so the level did not settle and its latencies depend on how long it ran",
		metric, first, last)
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
