package report

import (
	"testing"
	"time"

	"github.com/kneebench/knee/results"
)

// TestTickers: the plan's ticker keeps the cheapest configuration that
// meets the SLO, priced now; the prediction's, the largest load of the
// run of levels meeting the SLO from the first (as the SLO knee counts).
func TestTickers(t *testing.T) {
	p := NewPlanTicker(3, map[string]float64{"h100": 3, "l40s": 1}, time.Now())
	p.Searched([]results.PlanRow{{Config: "a", GPU: "h100", GPUs: 2, Replicas: 2, Meets: true}}, 10)
	p.Searched([]results.PlanRow{{Config: "b", GPU: "l40s", GPUs: 4, Replicas: 4, Meets: true},
		{Config: "c", GPU: "l40s", GPUs: 1, Replicas: 1, Meets: false}}, 25)
	if p.best != "4 × b ($4.00/h)" || p.done != 2 || p.predictions != 25 {
		t.Errorf("plan ticker: best %q after %d configurations, %d predictions", p.best, p.done, p.predictions)
	}
	q := NewPredictTicker(4, "/s", time.Now())
	s := &results.Sweep{}
	for i, meets := range []bool{true, true, false, true} {
		s.Levels = append(s.Levels, results.Level{Load: float64(i + 1), Verdict: &results.Verdict{Judged: true, Meets: meets}})
		q.Level(s, s.Levels[i])
	}
	if q.meets != 2 || q.done != 4 {
		t.Errorf("predict ticker: meets up to %g after %d levels, want 2 after 4", q.meets, q.done)
	}
}
