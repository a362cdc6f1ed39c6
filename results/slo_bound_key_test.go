package results

import "testing"

// A plan's figures are read by the bound whichever spelling keyed them:
// files keyed by the --slo spelling of their day, and by Key since.
func TestPlanFiguresBoundReadsEitherKey(t *testing.T) {
	b := Bound{Metric: "ttft", Percentile: 95, Ms: 500}
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"ttft_p95:500", true},
		{"ttft.p95:500", true},
		{"ttft_p99:500", false},
		{"ttft.p95:400", false},
	} {
		f := &PlanFigures{Bounds: map[string]float64{tc.key: 209.4}}
		v, ok := f.Bound(b)
		if ok != tc.want || (ok && v != 209.4) {
			t.Errorf("key %q: got %v, %v; want found %v", tc.key, v, ok, tc.want)
		}
	}
	if b.Key() != "ttft_p95:500" {
		t.Errorf("Key = %q, want the plan files' spelling ttft_p95:500", b.Key())
	}
	var none *PlanFigures
	if _, ok := none.Bound(b); ok {
		t.Error("no figures found a bound")
	}
}
