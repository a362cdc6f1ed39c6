package report

import (
	"testing"

	"github.com/kneebench/knee/results"
)

// TestSliceData holds what the page's slice charts are given: each
// series at its slices' ends, a slice without a value left out, the KV
// cache in percent, and nothing for a run of fewer than four slices (two
// or three points draw a "trend" that is only noise).
func TestSliceData(t *testing.T) {
	t.Parallel()
	waiting, running, kv := 7.0, 3.0, 0.25
	r := &results.Run{SliceS: 1, Slices: []results.Slice{
		{StartS: 0, EndS: 1, Completed: 2, TTFTSched: results.SliceDist{Count: 4, P50: 10, P95: 20, P99: 30}},
		{StartS: 1, EndS: 2, Completed: 5, Server: &results.SliceGauges{AtS: 2.1, Waiting: &waiting, Running: &running, KVCacheUsage: &kv}},
		{StartS: 2, EndS: 3, Completed: 1},
		{StartS: 3, EndS: 4, Completed: 1},
	}}
	js := sliceData(r)
	if js == nil {
		t.Fatal("no slices for the page")
	}
	want := map[string][][2]float64{
		"ttft_sched.p50": {{1, 10}}, "ttft_sched.p95": {{1, 20}}, "ttft_sched.p99": {{1, 30}},
		"completed": {{1, 2}, {2, 5}, {3, 1}, {4, 1}}, "waiting": {{2, 7}}, "running": {{2, 3}}, "kv_cache_usage": {{2, 25}},
	}
	if len(js.Series) != len(want) {
		t.Errorf("series %v, want %v", js.Series, want)
	}
	for name, pts := range want {
		got := js.Series[name]
		if len(got) != len(pts) {
			t.Errorf("%s: %v, want %v", name, got, pts)
			continue
		}
		for i := range pts {
			if got[i] != pts[i] {
				t.Errorf("%s: %v, want %v", name, got, pts)
			}
		}
	}
	if sliceData(&results.Run{Slices: r.Slices[:3]}) != nil {
		t.Error("three slices make no chart, but data was given")
	}
}
