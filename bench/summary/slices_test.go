package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
)

// TestSlicesShowAScriptedSlowdown: 20 requests a second for 4 s, their
// first token 10 ms after their due time for the first 2 s and 200 ms
// after it from then on, one failure in the last second: slices of 1 s
// count each second's 20 arrivals exactly, show the slowdown in the third
// and fourth, and put the failure in the fourth.
func TestSlicesShowAScriptedSlowdown(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "a run", true: "a shard"}[keep], func(t *testing.T) { scriptedSlowdown(t, keep) })
	}
}

// scriptedSlowdown is TestSlicesShowAScriptedSlowdown, the slices keeping
// their histograms (a shard's) or not; kept, each holds the slice's
// requests and reads its percentiles to HDR's three figures.
func scriptedSlowdown(t *testing.T, keep bool) {
	s := New(Level{Load: driver.Load{Rate: 20, Duration: 4 * time.Second}, Slice: time.Second, SliceHistograms: keep}, 4)
	start := 700 * time.Millisecond // the window starts off the ticks' grid
	for i := range 80 {
		due := start + time.Duration(i)*50*time.Millisecond
		ttft := 10 * time.Millisecond
		if due-start >= 2*time.Second {
			ttft = 200 * time.Millisecond
		}
		r := &record.Record{Index: i, Scheduled: due, Sent: due, FirstToken: due + ttft, LastToken: due + ttft + 40*time.Millisecond,
			Done: due + ttft + 40*time.Millisecond, Status: 200, Chunks: 5, CompletionTokens: 5, UsageReported: true}
		if i == 75 {
			r.Class, r.Status = record.ClassStreamError, 200
		}
		s.Add(r)
	}
	res := s.Requests(health.Report{}, driver.Window{Start: start, End: start + 4300*time.Millisecond, SchedStart: start, SchedEnd: start + 4*time.Second})
	if res.SliceS != 1 || len(res.Slices) != 5 {
		t.Fatalf("%v s slices: %d, want 1 s and 5 (the drain's tail in the last)", res.SliceS, len(res.Slices))
	}
	for i, want := range []float64{10, 10, 200, 200} {
		sl := res.Slices[i]
		failed := int64(0)
		if i == 3 {
			failed = 1
		}
		if sl.Sent != 20 || sl.Failed != failed || sl.TTFTSched.P50 != want || sl.TTFTSched.Count != 20-failed {
			t.Errorf("slice %d: sent %d, failed %d, TTFT p50 %v ms over %d; want 20, %d, %v over %d", i, sl.Sent, sl.Failed, sl.TTFTSched.P50, sl.TTFTSched.Count, failed, want, 20-failed)
		}
		if sl.TPOT.P50 != 10 {
			t.Errorf("slice %d: TPOT p50 %v ms, want 10", i, sl.TPOT.P50)
		}
		if !keep {
			if sl.Histograms != nil {
				t.Errorf("slice %d of a run keeps histograms", i)
			}
			continue
		}
		for name, d := range map[string]results.SliceDist{"ttft_sched": sl.TTFTSched, "tpot": sl.TPOT, "e2e_sched": sl.E2ESched} {
			h, err := results.DecodeHistogram(sl.Histograms[name])
			if err != nil {
				t.Fatalf("slice %d, %s: %v", i, name, err)
			}
			if p50 := float64(h.ValueAtPercentile(50)) / 1000; h.TotalCount() != d.Count || p50 < d.P50 || p50 > d.P50*1.001 {
				t.Errorf("slice %d, %s: histogram of %d, p50 %v ms; slice %d, p50 %v ms", i, name, h.TotalCount(), p50, d.Count, d.P50)
			}
		}
	}
	var completed int64
	for _, sl := range res.Slices {
		completed += sl.Completed
	}
	if completed != 79 {
		t.Errorf("completed %d over the slices, want 79", completed)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "TTFT rose through the window") {
		t.Errorf("no trend warning: %q", res.Warnings)
	}
}

// TestSliceTrendNeedsARise: steady slices, or a rise short of double, are
// no trend.
func TestSliceTrendNeedsARise(t *testing.T) {
	mk := func(p50s ...float64) []results.Slice {
		var out []results.Slice
		for i, p := range p50s {
			out = append(out, results.Slice{StartS: float64(i), EndS: float64(i + 1), TTFTSched: results.SliceDist{Count: 50, P50: p}})
		}
		return out
	}
	for _, c := range []struct {
		p50s []float64
		want bool
	}{
		{[]float64{20, 21, 19, 20, 22, 20, 0}, false},
		{[]float64{20, 24, 26, 30, 32, 35, 0}, false},
		{[]float64{20, 60, 120, 240, 480, 900, 0}, true},
	} {
		if got := sliceTrend(mk(c.p50s...)) != ""; got != c.want {
			t.Errorf("%v: trend %v, want %v", c.p50s, got, c.want)
		}
	}
}

// TestSlicesKeepRequestsDueBeforeTheWindow: a measured request due before
// the window opened (a closed loop's stream, due again as its warm-up
// request ended) is the first slice's, for its count and its latency
// alike, whether it was due a hair or a second before.
func TestSlicesKeepRequestsDueBeforeTheWindow(t *testing.T) {
	s := New(Level{Load: driver.Load{Concurrency: 2}, Slice: time.Second}, 1)
	start := 2 * time.Second
	s.SetOrigin(start)
	for i, due := range []time.Duration{start - 30*time.Millisecond, start - time.Second, start + 1500*time.Millisecond} {
		sent := max(due, start)
		s.Add(&record.Record{Index: i, Scheduled: due, Sent: sent, FirstToken: sent + 50*time.Millisecond, LastToken: sent + 90*time.Millisecond,
			Done: sent + 90*time.Millisecond, Status: 200, Chunks: 3, CompletionTokens: 3, UsageReported: true})
	}
	res := s.Requests(health.Report{}, driver.Window{Start: start, End: start + 2*time.Second})
	if len(res.Slices) != 2 {
		t.Fatalf("%d slices, want 2", len(res.Slices))
	}
	if first := res.Slices[0]; first.Sent != 2 || first.TTFTSched.Count != 2 || first.Completed != 2 {
		t.Errorf("first slice: %d due, %d TTFTs, %d completed; want the 2 due before the window, both ended in it", first.Sent, first.TTFTSched.Count, first.Completed)
	}
	if second := res.Slices[1]; second.Sent != 1 || second.TTFTSched.Count != 1 || second.Completed != 1 {
		t.Errorf("second slice: %d due, %d TTFTs, %d completed; want 1 of each", second.Sent, second.TTFTSched.Count, second.Completed)
	}
}

// TestSliceHistogramClampsPastAnHour: a slice's latency over the
// histograms' hour is kept at the hour, as the run's own are, not dropped
// from the slice's histogram that merge joins shards by.
func TestSliceHistogramClampsPastAnHour(t *testing.T) {
	enc := weightedHistogram(newHist(), []weighted{{v: 10, w: 1}, {v: 2 * 3600 * 1000, w: 3}})
	h, err := results.DecodeHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 4 {
		t.Errorf("the slice's histogram holds %d requests, want 4", h.TotalCount())
	}
	if hi := h.Max(); !h.ValuesAreEquivalent(hi, histMaxMicros) {
		t.Errorf("its largest value is %d µs, want the hour (%d)", hi, int64(histMaxMicros))
	}
}
