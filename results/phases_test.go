package results

import (
	"math"
	"testing"
)

// TestSummarizeExactAsNumpy: percentiles interpolate linearly between
// order statistics, as numpy's default (and vLLM's bench) does; NaNs are
// left out.
func TestSummarizeExactAsNumpy(t *testing.T) {
	s := SummarizeExact([]float64{4, 1, math.NaN(), 3, 2})
	for _, tc := range []struct {
		name      string
		got, want float64
	}{{"min", s.Min, 1}, {"p50", s.P50, 2.5}, {"p95", s.P95, 3.85}, {"max", s.Max, 4}, {"mean", s.Mean, 2.5}} {
		if math.Abs(tc.got-tc.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if s.Count != 4 {
		t.Errorf("count %d, want 4 (the NaN left out)", s.Count)
	}
}
