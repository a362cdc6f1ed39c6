package predict

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
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
	if !v.Meets {
		return false, v.Why
	}
	// A mix meets only when every class meets its own SLO.
	for _, name := range slices.Sorted(maps.Keys(r.Classes)) {
		if mc := r.Classes[name].MixClass; mc != nil && mc.MetSLO != nil && !*mc.MetSLO {
			return false, fmt.Sprintf("class %s missed %s", name, strings.Join(mc.Missed, "; "))
		}
	}
	return true, v.Why
}

// bindingClass is the class of a mix closest to its own SLO in r: the
// least share of a bound left (its value under the bound, over the
// bound), and that share; "" when no class has an SLO.
func bindingClass(r *results.Run) (string, float64) {
	best, slack := "", math.Inf(1)
	for _, name := range slices.Sorted(maps.Keys(r.Classes)) {
		c := r.Classes[name]
		if c.MixClass == nil || c.MixClass.SLO == "" {
			continue
		}
		bounds, _, err := results.ParseBounds(c.MixClass.SLO)
		if err != nil {
			continue
		}
		for _, b := range bounds {
			if v, ok := b.Value(c); ok && (b.Ms-v)/b.Ms < slack {
				best, slack = name, (b.Ms-v)/b.Ms
			}
		}
	}
	return best, slack
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
