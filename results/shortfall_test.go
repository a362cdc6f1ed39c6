package results

import (
	"strings"
	"testing"
)

// TestShortfallOverruledByAHeavierPace: a long-tailed sweep's 2/s level
// fell 8% short of its offer (four of 50 arrivals finishing past the
// window), while 4, 6 and 8/s kept pace with two to four times its
// throughput. That is the window's edge, not saturation: 2/s meets the
// SLO, the SLO knee and saturation move past it, and the sweep says why.
// A shortfall no heavier level disproves still saturates.
func TestShortfallOverruledByAHeavierPace(t *testing.T) {
	run := func(offered, completion float64, ttft float64) *Run {
		r := &Run{Health: Health{Verdict: VerdictHealthy}}
		r.Requests.OK = 50
		r.Stats.TTFTSched = Summary{Count: 50, P95: ttft}
		r.Arrivals.OfferedRate, r.Arrivals.CompletionRate, r.Arrivals.WindowArrivals = offered, completion, 50
		r.Throughput.RequestsPerS = completion
		return r
	}
	slo := SLO{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}
	for _, c := range []struct {
		name       string
		levels     []Level
		saturation float64 // 0: none
		sloKnee    float64
		overruled  int
	}{
		{"edge at 2/s, pace above", []Level{{Load: 1, Run: run(1, 1, 100)}, {Load: 2, Run: run(2, 1.84, 110)},
			{Load: 4, Run: run(4, 3.95, 120)}, {Load: 6, Run: run(6, 5.9, 140)}, {Load: 8, Run: run(8, 7.9, 160)}}, 0, 8, 1},
		{"real saturation at 8/s", []Level{{Load: 1, Run: run(1, 1, 100)}, {Load: 2, Run: run(2, 2, 110)},
			{Load: 4, Run: run(4, 3.95, 120)}, {Load: 8, Run: run(8, 5.1, 160)}}, 8, 4, 0},
		{"short and slow at 12/s, 16/s keeping pace", []Level{{Load: 8, Run: run(8, 7.9, 200)}, {Load: 12, Run: run(12, 11.1, 795)},
			{Load: 16, Run: run(16, 15.3, 2654)}}, 0, 8, 1},
		{"short at 4/s, 8/s short too", []Level{{Load: 1, Run: run(1, 1, 100)}, {Load: 4, Run: run(4, 3.6, 120)},
			{Load: 8, Run: run(8, 4.2, 160)}}, 4, 1, 0},
	} {
		s := &Sweep{Axis: "rate", SLO: slo, Levels: c.levels}
		s.FindKnees()
		sat := 0.0
		if k := s.Knees.Saturation; k != nil {
			sat = k.Load
		}
		if sat != c.saturation || s.Knees.SLO == nil || s.Knees.SLO.Load != c.sloKnee || len(s.Knees.Overruled) != c.overruled {
			t.Errorf("%s: saturation %g, SLO knee %+v, overruled %+v; want %g, %g, %d", c.name, sat, s.Knees.SLO, s.Knees.Overruled,
				c.saturation, c.sloKnee, c.overruled)
		}
		for _, o := range s.Knees.Overruled {
			if !strings.Contains(o.Reason, "8% short") || !strings.Contains(o.Reason, " kept pace (") {
				t.Errorf("%s: overruled %g: %s", c.name, o.Load, o.Reason)
			}
		}
	}
}
