package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The deciders that SLO.Judge replaced, as they were, so that
// TestOneVerdictAgrees can hold the new one to them on every fixture:
// the sweep's stop rule (bench.MissesSLO), the SLO knee's per-level test
// (FindKnees with SLOKnee), knee plan's judge (predict/plan_slo.go) and
// the report page's explorer (report/page.js), which left out the error
// rate.

// oldMissesSLO is bench.MissesSLO: the sweep's stop rule.
func oldMissesSLO(s *Sweep, l Level) bool {
	if l.Run == nil {
		return false
	}
	v, ok := s.SLO.Value(l.Run)
	return !ok || v > s.SLO.Threshold() || l.Run.Requests.ErrorRate() >= s.SLO.MaxErrorRate ||
		l.Run.MissingShare() > MaxMissingShare
}

// oldKneeVerdict is how FindKnees's points and SLOKnee judged one level:
// excluded (failed, interrupted, unhealthy under the policy), or met
// unless unreliable, over the threshold, erring or unmeasured.
func oldKneeVerdict(s *Sweep, l Level) (judged, meets bool) {
	r := l.Run
	switch {
	case r == nil, r.Interrupted:
		return false, false
	case !r.Health.Healthy() && s.HealthPolicy != HealthWarn && s.HealthPolicy != HealthIgnore:
		return false, false
	}
	lat := math.NaN()
	if v, ok := s.SLO.Value(r); ok {
		lat = v
	}
	unreliable := r.MissingShare() > MaxMissingShare
	return true, !(unreliable || lat > s.SLO.Threshold() || r.Requests.ErrorRate() >= s.SLO.MaxErrorRate || math.IsNaN(lat))
}

// oldPlanJudge is predict's judge before SLO.Judge.
func oldPlanJudge(slo SLO, r *Run, axis string, load float64) bool {
	if r.Interrupted || r.Requests.OK == 0 || r.Requests.ErrorRate() >= slo.MaxErrorRate || r.MissingShare() > MaxMissingShare {
		return false
	}
	for _, b := range slo.Bounds {
		v, ok := b.Value(r)
		if !ok || v > b.Ms {
			return false
		}
	}
	if slo.MinGoodPercent > 0 && (r.Goodput == nil || 100*r.Goodput.Share < slo.MinGoodPercent) {
		return false
	}
	s := &Sweep{Axis: axis, SLO: SLO{MaxErrorRate: 1}, Levels: []Level{{Load: load, Run: r}}}
	s.oldFindSaturation()
	return s.Knees.Saturation == nil
}

// oldFindSaturation is FindKnees's saturation knee alone, as the plan's
// judge used it on one level.
func (s *Sweep) oldFindSaturation() {
	var pts []Point
	for _, l := range s.Levels {
		pts = append(pts, levelPoint(l, s.Axis))
	}
	if i, ok := SaturationLevel(pts); ok {
		s.Knees.Saturation = &Knee{Load: pts[i].Load, Index: i}
	}
}

// oldExplorer is the page's explorer: a level meets a bound when its
// figure does, whatever its errors.
func oldExplorer(b Bound, r *Run) bool {
	v, ok := b.Value(r)
	return ok && v <= b.Ms
}

// verdictFixtures are the sweeps the deciders are compared on: predicted
// and measured, open and closed loop, requests and calls, capped, cut by
// the drain, served by a fleet.
func verdictFixtures(t *testing.T) map[string]*Sweep {
	t.Helper()
	paths, err := filepath.Glob("testdata/verdict/*.json")
	if err != nil || len(paths) < 10 {
		t.Fatalf("%d fixtures (%v)", len(paths), err)
	}
	out := map[string]*Sweep{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := DecodeSweep(p, b)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = s
	}
	return out
}

// verdictSLOs are the SLOs every fixture is judged against: tight and
// loose bounds of several metrics, strict and loose error rates.
var verdictSLOs = []SLO{
	{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02},
	{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 40}}, MaxErrorRate: 0.02},
	{Bounds: []Bound{{Metric: "ttft", Percentile: 50, Ms: 1000}}, MaxErrorRate: 0.001},
	{Bounds: []Bound{{Metric: "itl", Percentile: 99, Ms: 25}}, MaxErrorRate: 0.02},
	{Bounds: []Bound{{Metric: "e2e", Percentile: 90, Ms: 5000}}, MaxErrorRate: 0.5},
	{Bounds: []Bound{{Metric: "tpot", Percentile: 95, Ms: 8}}, MaxErrorRate: 0.02},
}

// TestOneVerdictAgrees holds SLO.Judge to the deciders it replaced, on
// every fixture, SLO and health policy: where a sweep judged a level, the
// new verdict is the old one; where the plan judged it, likewise; and the
// page's explorer, which ignored errors and missing requests, agrees
// wherever the level did not err or miss its requests (the levels where
// it did are the disagreement the one verdict ends, counted here).
func TestOneVerdictAgrees(t *testing.T) {
	rows, explorerFixed := 0, 0
	for name, fixture := range verdictFixtures(t) {
		for _, slo := range verdictSLOs {
			for _, policy := range HealthPolicies {
				s := *fixture
				s.SLO, s.HealthPolicy = slo, policy
				for _, l := range s.Levels {
					rows++
					where := fmt.Sprintf("%s at %g (%s, %s)", name, l.Load, slo.BoundsText(), policy)
					v := s.SLO.judge(l, s.Axis, policy, false)
					judged, meets := oldKneeVerdict(&s, l)
					if v.Judged != judged || judged && v.Meets != meets {
						t.Errorf("%s: the sweep's knee judged %v met %v; the one verdict %+v", where, judged, meets, v)
					}
					if l.Run != nil && policy == HealthIgnore && !l.Run.Interrupted && oldMissesSLO(&s, l) != (v.Judged && !v.Meets) {
						t.Errorf("%s: the stop rule said missed %v; the one verdict %+v", where, oldMissesSLO(&s, l), v)
					}
					if l.Run == nil || l.Run.Interrupted || policy != HealthIgnore {
						continue
					}
					full := s.SLO.Judge(l, s.Axis, HealthIgnore)
					if old := oldPlanJudge(slo, l.Run, s.Axis, l.Load); old != full.Meets {
						t.Errorf("%s: the plan's judge said %v; the one verdict %+v", where, old, full)
					}
					if old := oldExplorer(slo.Bounds[0], l.Run); old != full.Meets || old != v.Meets {
						if !full.Gate {
							t.Errorf("%s: the page's explorer said %v; the one verdict %+v, %+v", where, old, full, v)
						}
						explorerFixed++
					}
				}
			}
		}
	}
	t.Logf("%d levels judged; the explorer disagreed on %d, every one a level that erred, lost requests or fell behind", rows, explorerFixed)
	if rows < 500 {
		t.Errorf("only %d rows compared", rows)
	}
}

// TestFallingBehindMissesTheSLO: a level whose latency meets the bound
// over its window but whose completions fell short of its arrivals does
// not meet the SLO (its queue would grow past any bound over a longer
// window), so the SLO knee stops below it, as knee plan always judged.
func TestFallingBehindMissesTheSLO(t *testing.T) {
	s := &Sweep{Axis: "rate", SLO: SLO{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}}
	for _, load := range []float64{2, 4, 8} {
		r := &Run{Health: Health{Verdict: VerdictHealthy}, Requests: Requests{Sent: 100, OK: 100}}
		r.Stats.TTFTSched = Summary{Count: 100, P95: 120}
		r.Arrivals.OfferedRate, r.Arrivals.WindowArrivals, r.Arrivals.CompletionRate = load, int64(load*30), load
		if load == 8 {
			r.Arrivals.CompletionRate = 6 // a quarter short: 60 of the 240 arrivals
		}
		s.Levels = append(s.Levels, Level{Load: load, Run: r})
	}
	s.FindKnees()
	if k := s.Knees.SLO; k == nil || k.Load != 4 || s.Knees.SLONotReached {
		t.Errorf("SLO knee %+v (not reached %v), want 4/s, crossed at 8", k, s.Knees.SLONotReached)
	}
	if v := s.Levels[2].Verdict; v == nil || v.Meets || !v.Gate || v.Why != "fell behind the offered load" {
		t.Errorf("the level that fell behind: %+v", v)
	}
	if k := s.Knees.Saturation; k == nil || k.Load != 8 {
		t.Errorf("saturation %+v, want 8/s", k)
	}
}
