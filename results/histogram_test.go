package results

import (
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// TestSummarizeCounts: whole counts read as they were recorded — a run of
// 2,048-token prompts says 2,048 everywhere (the time reading said 2,049)
// — and exactly below 2,048.
func TestSummarizeCounts(t *testing.T) {
	cases := []struct {
		name   string
		values []int64
		want   Summary
	}{
		{"all 2048", []int64{2048, 2048, 2048, 2048}, Summary{Count: 4, Mean: 2048, Min: 2048, P50: 2048, P90: 2048, P95: 2048, P99: 2048, Max: 2048}},
		{"1 to 100", seq(1, 100), Summary{Count: 100, Mean: 50.5, Stddev: 28.86607004772212, Min: 1, P50: 50, P90: 90, P95: 95, P99: 99, Max: 100}},
		{"one", []int64{7}, Summary{Count: 1, Mean: 7, Min: 7, P50: 7, P90: 7, P95: 7, P99: 7, Max: 7}},
	}
	for _, c := range cases {
		h := hdrhistogram.New(1, 100_000_000, 3)
		for _, v := range c.values {
			_ = h.RecordValue(v)
		}
		if got := SummarizeCounts(h); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func seq(from, to int64) []int64 {
	var out []int64
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}
