package predict

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
)

// ParseBounds reads latency bounds as knee plan's --slo gives them:
// METRIC_pNN:MS, comma-separated, e.g. ttft_p95:500,tpot_p50:50. The
// metrics are the stats names (ttft, ttft_sched, itl, tpot, e2e,
// e2e_sched, queue_wait) and the percentiles 50, 90, 95 and 99.
func ParseBounds(s string) ([]results.PlanBound, error) {
	var out []results.PlanBound
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, ok := strings.Cut(part, ":")
		i := strings.LastIndex(key, "_p")
		if !ok || i < 1 {
			return nil, fmt.Errorf("%q: want METRIC_pNN:MS, e.g. ttft_p95:500", part)
		}
		metric := key[:i]
		pct, err := strconv.ParseFloat(key[i+2:], 64)
		if err != nil || (pct != 50 && pct != 90 && pct != 95 && pct != 99) {
			return nil, fmt.Errorf("%q: the percentile is one of 50, 90, 95, 99", part)
		}
		if _, ok := (results.Stats{}).SummaryOf(metric); !ok {
			return nil, fmt.Errorf("%q: the metric is one of ttft, ttft_sched, itl, tpot, e2e, e2e_sched, queue_wait", part)
		}
		ms, err := strconv.ParseFloat(val, 64)
		if err != nil || !(ms > 0) || ms > 1e9 {
			return nil, fmt.Errorf("%q: the bound is a positive number of milliseconds", part)
		}
		out = append(out, results.PlanBound{Metric: metric, Percentile: pct, Ms: ms})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no bound given")
	}
	return out, nil
}

// Meets says whether a level, predicted or measured, meets a plan's SLO
// (see judge), and why not.
func Meets(slo results.PlanSLO, r *results.Run, axis string, load float64) (bool, string) {
	return judge(slo, r, axis, load)
}

// judge says whether a predicted level meets the SLO: every bound, the
// error rate, no more than results.MaxMissingShare of its requests cut or
// unsent, its goodput, and no saturation by the sweep's own rules (a
// server falling behind may still meet a latency bound over a short
// window, but not for long). It returns why not.
func judge(slo results.PlanSLO, r *results.Run, axis string, load float64) (bool, string) {
	if r.Interrupted {
		return false, "given up: past the SLO beyond doubt before the window ended"
	}
	if r.Requests.OK == 0 {
		return false, "no request succeeded"
	}
	if e := r.Requests.ErrorRate(); e >= slo.MaxErrorRate {
		return false, fmt.Sprintf("errors %.1f%%", 100*e)
	}
	if m := r.MissingShare(); m > results.MaxMissingShare {
		return false, fmt.Sprintf("%.1f%% of its requests cut or never sent", 100*m)
	}
	for _, b := range slo.Bounds {
		v, ok := b.Value(r)
		if !ok {
			return false, fmt.Sprintf("no %s measured", b.Metric)
		}
		if v > b.Ms {
			return false, fmt.Sprintf("%s p%g %.0f ms > %g", b.Metric, b.Percentile, v, b.Ms)
		}
	}
	if slo.MinGoodPercent > 0 && (r.Goodput == nil || 100*r.Goodput.Share < slo.MinGoodPercent) {
		share := 0.0
		if r.Goodput != nil {
			share = 100 * r.Goodput.Share
		}
		return false, fmt.Sprintf("goodput %.1f%% < %g%%", share, slo.MinGoodPercent)
	}
	s := &results.Sweep{Axis: axis, SLO: results.SLO{MaxErrorRate: 1}, Levels: []results.Level{{Load: load, Run: r}}}
	s.FindKnees()
	if s.Knees.Saturation != nil {
		return false, "fell behind the offered load"
	}
	return true, ""
}

// hopeless is a level's early verdict, from its records as they end: once
// more requests broke a percentile bound than that percentile allows of
// the most requests the level can have (expected, with room for a
// Poisson schedule's spread), or failed past the error rate, the level
// cannot meet the SLO, and predicting the rest of it is wasted.
func hopeless(slo results.PlanSLO, expected float64) func(*record.Record) bool {
	most := expected*1.2 + 10
	over := make([]int, len(slo.Bounds))
	failed := 0
	return func(r *record.Record) bool {
		if r.Class != "" {
			failed++
			return float64(failed) >= slo.MaxErrorRate*most
		}
		for i, b := range slo.Bounds {
			v, ok := recordValue(r, b.Metric)
			if !ok || v <= time.Duration(b.Ms*float64(time.Millisecond)) {
				continue
			}
			over[i]++
			if float64(over[i]) > (1-b.Percentile/100)*most {
				return true
			}
		}
		return false
	}
}

// recordValue is a request's figure of a metric, as the summary counts
// it (ITL, a per-chunk figure, is not judged from requests).
func recordValue(r *record.Record, metric string) (time.Duration, bool) {
	if r.Chunks == 0 {
		return 0, false
	}
	switch metric {
	case "ttft":
		return r.FirstToken - r.Sent, true
	case "ttft_sched":
		return r.FirstToken - r.Scheduled, true
	case "e2e":
		return r.LastToken - r.Sent, true
	case "e2e_sched":
		return r.LastToken - r.Scheduled, true
	case "queue_wait":
		return r.Sent - r.Scheduled, true
	case "tpot":
		if out := r.OutputTokens(); out > 1 {
			return (r.LastToken - r.FirstToken) / time.Duration(out-1), true
		}
	}
	return 0, false
}
