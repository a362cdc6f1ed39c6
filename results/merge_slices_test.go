package results

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// slicedShard is shard i of n with two one-second slices: TTFTs (ms) of
// the requests due in each, and a gauge reading and a client verdict.
func slicedShard(i, n int, ttftMs [2][]int64, verdict string) *Run {
	r := shardRun(i, n, []int64{1000}, 7)
	r.SliceS = 1
	for k, vs := range ttftMs {
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		for _, v := range vs {
			_ = h.RecordValue(v * 1000)
		}
		waiting := float64(10*i + k)
		sl := Slice{StartS: float64(k), EndS: float64(k + 1), Sent: int64(len(vs)) + 1, Failed: 1, Completed: int64(len(vs)), OutputTokensPerS: float64(10 * len(vs)),
			TTFTSched: sliceDist(h), Server: &SliceGauges{AtS: float64(k) + 0.9, Waiting: &waiting},
			Client:     &SliceClient{Verdict: verdict, Reasons: []string{"timer lag"}, TimerLagMaxMs: float64(i + 1)},
			Histograms: Histograms{"ttft_sched": EncodeHistogram(h)}}
		r.Slices = append(r.Slices, sl)
	}
	return r
}

// TestMergeSlices: the shards' slices join index by index, each slice's
// percentiles those of the union of the shards' requests in it, counts
// and tokens summed, the gauges shard 0's and the client the worst
// shard's, named.
func TestMergeSlices(t *testing.T) {
	a := slicedShard(0, 2, [2][]int64{{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, {40}}, VerdictHealthy)
	b := slicedShard(1, 2, [2][]int64{{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}, {50, 60}}, VerdictClientLimited)
	m, err := MergeRuns([]*Run{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if m.SliceS != 1 || len(m.Slices) != 2 {
		t.Fatalf("%g s slices, %d of them; want 1 s and 2 (notes %q)", m.SliceS, len(m.Slices), m.Notes)
	}
	s0, s1 := m.Slices[0], m.Slices[1]
	// The union of 20 values: the 10th (p50) is 19 ms, the 19th (p95) 108.
	if d := s0.TTFTSched; d.Count != 20 || !near(d.P50, 19) || !near(d.P95, 108) || !near(d.P99, 109) {
		t.Errorf("slice 0's TTFT %+v, want the union's: 20 values, p50 19, p95 108, p99 109 ms", d)
	}
	if d := s1.TTFTSched; d.Count != 3 || !near(d.P50, 50) || !near(d.P99, 60) {
		t.Errorf("slice 1's TTFT %+v, want p50 50 and p99 60 of 3", d)
	}
	if s0.Sent != 22 || s0.Failed != 2 || s0.Completed != 20 || s0.OutputTokensPerS != 200 || s1.Sent != 5 {
		t.Errorf("counts: slice 0 %d sent, %d failed, %d completed, %g tok/s; slice 1 %d sent", s0.Sent, s0.Failed, s0.Completed, s0.OutputTokensPerS, s1.Sent)
	}
	if s1.Server == nil || *s1.Server.Waiting != 1 {
		t.Errorf("slice 1's gauges %+v, want shard 0's (waiting 1)", s1.Server)
	}
	if c := s0.Client; c == nil || c.Verdict != VerdictClientLimited || c.TimerLagMaxMs != 2 || len(c.Reasons) != 1 || !strings.HasPrefix(c.Reasons[0], "shard 1: ") {
		t.Errorf("slice 0's client %+v, want shard 1's client-limited verdict, named, and the larger lag", c)
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "the time slices join the shards' slice by slice") {
		t.Errorf("the notes do not say how the slices were joined: %q", m.Notes)
	}
}

// near reports whether an HDR percentile (3 significant figures) reads v.
func near(got, v float64) bool { return got >= v && got <= v*1.001 }

// TestMergeSlicesRefused: slices cut differently, windows started apart
// by more than a tenth of a slice, or files without the slices'
// histograms merge with no slices, and the notes say why.
func TestMergeSlicesRefused(t *testing.T) {
	two := func() (*Run, *Run) {
		return slicedShard(0, 2, [2][]int64{{10}, {20}}, VerdictHealthy), slicedShard(1, 2, [2][]int64{{30}, {40}}, VerdictHealthy)
	}
	for _, c := range []struct {
		name  string
		spoil func(b *Run)
		note  string
	}{
		{"widths", func(b *Run) { b.SliceS = 2 }, "cut its window into slices of 2 s"},
		{"apart", func(b *Run) { b.WindowStartedAt = b.WindowStartedAt.Add(150 * time.Millisecond) }, "more than a tenth of a slice"},
		{"older file", func(b *Run) {
			for i := range b.Slices {
				b.Slices[i].Histograms = nil
			}
		}, "keeps no histograms for its slices"},
	} {
		a, b := two()
		c.spoil(b)
		m, err := MergeRuns([]*Run{a, b})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if m.Slices != nil || !strings.Contains(strings.Join(m.Notes, "\n"), c.note) {
			t.Errorf("%s: %d slices, notes %q; want none, saying %q", c.name, len(m.Slices), m.Notes, c.note)
		}
	}
}

// TestForgedSliceCounts: a result file whose slices count what no run
// measures is refused, as its own counts would be.
func TestForgedSliceCounts(t *testing.T) {
	a := slicedShard(0, 2, [2][]int64{{10}, {20}}, VerdictHealthy)
	b := slicedShard(1, 2, [2][]int64{{30}, {40}}, VerdictHealthy)
	b.Slices[1].Failed = -3
	if _, err := MergeRuns([]*Run{a, b}); err == nil || !strings.Contains(err.Error(), "slices[1] counts -3") {
		t.Errorf("a slice of -3 failed merged: %v", err)
	}
}

// TestSliceSpan: a slice is named to a tenth of a second, the window's
// cut last slice too ("0–0.850430601 s" read as a measurement).
func TestSliceSpan(t *testing.T) {
	for _, c := range []struct {
		from, to float64
		want     string
	}{{0, 10, "0–10 s"}, {10, 11.658971591, "10–11.7 s"}, {0, 0.850430601, "0–0.9 s"}, {2.5, 3, "2.5–3 s"}} {
		if got := (Slice{StartS: c.from, EndS: c.to}).Span(); got != c.want {
			t.Errorf("%v–%v: %q, want %q", c.from, c.to, got, c.want)
		}
	}
}
