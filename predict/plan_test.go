package predict

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// TestBisectFindsAKnownCapacity: against a predicate whose capacity is
// known, the bisection's answer meets it and lies within one step below
// it, from any start; a capacity under the lightest load is none.
func TestBisectFindsAKnownCapacity(t *testing.T) {
	step := func(x float64) float64 { return math.Max(0.02*x, 0.01) }
	ident := func(x float64) float64 { return x }
	whole := func(x float64) float64 { return math.Max(math.Floor(x), 1) }
	for _, tc := range []struct {
		capacity, from float64
		round          func(float64) float64
		step           func(float64) float64
	}{
		{20.3, 50, ident, step}, {20.3, 1, ident, step}, {20.3, 20.3, ident, step}, {0.5, 50, ident, step},
		{3700, 10, ident, step}, {37, 100, whole, func(float64) float64 { return 1 }}, {1, 8, whole, func(float64) float64 { return 1 }},
	} {
		probes := 0
		got, _, err := Bisect(tc.from, 0.01, 1e5, tc.step, tc.round, func(x float64) (bool, string, error) {
			probes++
			return x <= tc.capacity, "over", nil
		})
		if err != nil || got > tc.capacity || got < tc.capacity-tc.step(tc.capacity) {
			t.Errorf("capacity %g from %g: found %g (%v) in %d probes, want within one step below", tc.capacity, tc.from, got, err, probes)
		}
	}
	got, why, _ := Bisect(5, 0.01, 1e5, step, ident, func(float64) (bool, string, error) { return false, "always", nil })
	if got != 0 || why != "always" {
		t.Errorf("nothing meets: found %g, why %q", got, why)
	}
}

// planLevel predicts h100 8B at rate for two minutes of 1,000-token
// prompts and 200-token answers.
func planLevel(t *testing.T, rate float64, abandon func(*record.Record) bool) *results.Run {
	t.Helper()
	v := &Virtual{Target: presetTarget(t, "h100-80gb/llama-3.1-8b"), Abandon: abandon, NoITL: abandon != nil}
	r, err := v.Run(context.Background(), requestsLevel(workload.Synthetic{Tokens: 1000, MaxTokens: 200, Seed: 4},
		driver.Load{Rate: rate, Burstiness: 1, Duration: 2 * time.Minute, Seed: 4, DrainTimeout: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPlanBisectionOnThePredictor: on the predictor itself, the bisection
// finds the capacity a fine scan of loads finds (the largest load below
// which every load scanned meets the SLO), within one step; and the early
// verdict gives up on loads past capacity but never on one that meets.
func TestPlanBisectionOnThePredictor(t *testing.T) {
	slo := results.SLO{Bounds: []results.Bound{{Metric: "ttft", Percentile: 95, Ms: 500}}, MaxErrorRate: 0.02}
	meets := func(rate float64) (bool, string, error) {
		r := planLevel(t, rate, hopeless(slo, rate*120))
		ok, why := judge(slo, r, "rate", rate)
		return ok, why, nil
	}
	truth := 0.0
	for rate := 14.0; rate <= 26; rate += 0.5 {
		ok, _, _ := meets(rate)
		if !ok {
			break
		}
		truth = rate
	}
	if truth == 0 || truth >= 26 {
		t.Fatalf("the scan found capacity %g: the test's range does not hold it", truth)
	}
	step := func(x float64) float64 { return math.Max(0.02*x, 0.01) }
	got, _, _ := Bisect(50, 0.01, 1e5, step, func(x float64) float64 { return x }, meets)
	t.Logf("capacity: scan %g/s, bisection %.2f/s", truth, got)
	if math.Abs(got-truth) > step(truth)+0.5 {
		t.Errorf("bisection found %.2f/s, the scan %g/s (within a step and the scan's 0.5)", got, truth)
	}
	// The early verdict: never on a level that meets, soon on one far past.
	if r := planLevel(t, truth, hopeless(slo, truth*120)); r.Interrupted {
		t.Errorf("a level that meets the SLO (%g/s) was given up", truth)
	}
	full, cut := planLevel(t, 3*truth, nil), planLevel(t, 3*truth, hopeless(slo, 3*truth*120))
	if !cut.Interrupted || cut.Requests.Sent > full.Requests.Sent/2 {
		t.Errorf("at three times capacity: given up %v after %d of %d requests", cut.Interrupted, cut.Requests.Sent, full.Requests.Sent)
	}
	if ok, why := judge(slo, cut, "rate", 3*truth); ok || why == "" {
		t.Errorf("a level given up was judged %v (%q)", ok, why)
	}
}
