package predict

import (
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
)

// judge says whether a predicted level of a plan meets the SLO, and why
// not: SLO.Judge, and a level the search gave up on (it cut it short once
// it could no longer meet the SLO) misses.
func judge(slo results.SLO, r *results.Run, axis string, load float64) (bool, string) {
	if r.Interrupted {
		return false, "given up: past the SLO beyond doubt before the window ended"
	}
	v := slo.Judge(results.Level{Load: load, Run: r}, axis, "")
	return v.Meets, v.Why
}

// hopeless is a level's early verdict, from its records as they end: once
// more requests broke a percentile bound than that percentile allows of
// the most requests the level can have (expected, with room for a
// Poisson schedule's spread), or failed past the error rate, the level
// cannot meet the SLO, and predicting the rest of it is wasted.
func hopeless(slo results.SLO, expected float64) func(*record.Record) bool {
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
