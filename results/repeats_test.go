package results

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIntervalOf(t *testing.T) {
	for _, c := range []struct {
		values   []float64
		mean, hw float64
		ok       bool
	}{
		// t(0.975, 2) = 4.3027; sd 1; half-width 4.3027/√3.
		{[]float64{1, 2, 3}, 2, 4.302653 / math.Sqrt(3), true},
		// t(0.975, 4) = 2.7764; sd √2.5.
		{[]float64{10, 11, 12, 13, 14}, 12, 2.776445 * math.Sqrt(2.5) / math.Sqrt(5), true},
		{[]float64{5, 5, 5}, 5, 0, true},
		{[]float64{5}, 0, 0, false},
		{nil, 0, 0, false},
	} {
		iv, ok := IntervalOf(c.values)
		if ok != c.ok || math.Abs(iv.Mean-c.mean) > 1e-9 || math.Abs(iv.HalfWidth-c.hw) > 1e-5 ||
			math.Abs(iv.Low-(iv.Mean-iv.HalfWidth)) > 1e-12 || math.Abs(iv.High-(iv.Mean+iv.HalfWidth)) > 1e-12 {
			t.Errorf("IntervalOf(%v) = %+v, %v; want mean %g ± %g, %v", c.values, iv, ok, c.mean, c.hw, c.ok)
		}
	}
}

// TestPoolRepeats: repeats run one after another pool into one level:
// percentiles of all their requests, counts summed, rates over their
// windows' sum (a mean, not a sum as for shards), each repeat's figures
// kept with an interval across them.
func TestPoolRepeats(t *testing.T) {
	var runs []*Run
	for i := range 3 {
		var v []int64
		for j := range 100 {
			v = append(v, int64(1000*(j+1)*(i+1)))
		}
		r := shardRun(0, 1, v, uint64(i+1))
		r.Shard = nil
		r.WindowStartedAt = r.WindowStartedAt.Add(time.Duration(i) * time.Minute)
		r.Throughput.RequestsPerS = float64(100) / r.WindowSeconds
		r.Arrivals.AchievedRate, r.Arrivals.OfferedRate = 10, 9+float64(i)
		r.Stats.TTFT = Summary{Count: 100, P50: 50.5 * float64(i+1), P90: 90.5 * float64(i+1), P95: 95.5 * float64(i+1), P99: 99.5 * float64(i+1)}
		r.Warnings = []string{"the window (10s) is short", "repeat-only warning " + strings.Repeat("x", i)}
		runs = append(runs, r)
	}
	m, err := PoolRepeats(runs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests.OK != 300 || m.WindowSeconds != 30 || m.Throughput.RequestsPerS != 10 || m.Arrivals.AchievedRate != 10 || m.Arrivals.OfferedRate != 10 {
		t.Errorf("pooled: ok %d, window %g s, %g req/s, achieved %g/s, offered %g/s; want 300, 30, 10, 10, 10",
			m.Requests.OK, m.WindowSeconds, m.Throughput.RequestsPerS, m.Arrivals.AchievedRate, m.Arrivals.OfferedRate)
	}
	// The union's median: of 1..100, 2..200 by 2 and 3..300 by 3 ms, x
	// + x/2 + x/3 values lie under x, so 150 lie under 81.8 ms.
	if p := m.Stats.TTFT.P50; p < 81 || p > 83 {
		t.Errorf("pooled TTFT p50 %.1f ms, want 81.8 (the union's median)", p)
	}
	rp := m.Repeats
	if rp == nil || rp.Count != 3 || len(rp.Each) != 3 || rp.Each[2].Seed != 3 {
		t.Fatalf("repeats %+v", rp)
	}
	iv := rp.Intervals["ttft.p50"]
	if want := (rp.Each[0].Figures["ttft.p50"] + rp.Each[1].Figures["ttft.p50"] + rp.Each[2].Figures["ttft.p50"]) / 3; math.Abs(iv.Mean-want) > 1e-9 || iv.HalfWidth <= 0 {
		t.Errorf("ttft.p50 interval %+v, want mean %g and a width", iv, want)
	}
	if _, ok := rp.Intervals["throughput"]; !ok {
		t.Error("no throughput interval")
	}
	var alike, own int
	for _, w := range m.Warnings {
		switch {
		case strings.HasPrefix(w, "repeats 1, 2, 3 (1's figures): the window"):
			alike++
		case strings.HasPrefix(w, "repeat ") && strings.Contains(w, "repeat-only"):
			own++
		}
	}
	if alike != 1 || own != 3 {
		t.Errorf("want the warning every repeat gave said once, naming all three, and each repeat's own apart; got %q", m.Warnings)
	}
	if _, err := PoolRepeats(runs[:1]); err == nil {
		t.Error("one repeat pooled")
	}
	mix := *runs[1]
	mix.Classes = map[string]*Run{"a": runs[0]}
	if _, err := PoolRepeats([]*Run{runs[0], &mix}); err == nil {
		t.Error("a mix's repeats pooled")
	}
}

// TestRepeatsThatAllAgree: repeats whose every figure is the same (a
// prediction of fixed-length requests) say that ± 0 is no server's
// spread; repeats that differ, or agree but for a float's last bits, are
// told apart from them.
func TestRepeatsThatAllAgree(t *testing.T) {
	same := func(spread float64) []*Run {
		var runs []*Run
		for i := range 3 {
			v := make([]int64, 100)
			for j := range v {
				v[j] = int64(1000 * (j + 1))
			}
			r := shardRun(0, 1, v, uint64(i+1))
			r.Shard = nil
			r.Throughput.RequestsPerS = 10 + spread*float64(i)
			runs = append(runs, r)
		}
		return runs
	}
	for _, tc := range []struct {
		spread float64
		want   bool
	}{{0, true}, {1e-14, true}, {0.5, false}} {
		m, err := PoolRepeats(same(tc.spread))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Repeats.Same(); got != tc.want || slices.Contains(m.Notes, SameNote) != tc.want {
			t.Errorf("throughput spread %g: Same %v, note %v; want %v", tc.spread, got, slices.Contains(m.Notes, SameNote), tc.want)
		}
	}
	var none *Repeats
	if none.Same() {
		t.Error("no repeats are the same")
	}
}

// TestPoolRepeatsOfAMix: a mix's classes pool repeat by repeat, each
// class from its own requests alone, with its own interval across the
// repeats and its verdict judged again on the pooled figures; repeats
// that ran different mixes are refused.
func TestPoolRepeatsOfAMix(t *testing.T) {
	slo := func(s string) *MixClass { return &MixClass{Share: 0.5, SLO: s} }
	mixRuns := func() []*Run {
		var runs []*Run
		for i := range 3 {
			var fast, slow []int64
			for j := range 100 {
				fast = append(fast, int64(1000*(j+1)))
				slow = append(slow, int64(10_000*(j+1)*(i+1)))
			}
			r := shardRun(0, 1, append(append([]int64(nil), fast...), slow...), uint64(i+1))
			r.Shard = nil
			r.WindowStartedAt = r.WindowStartedAt.Add(time.Duration(i) * time.Minute)
			f, s := shardRun(0, 1, fast, 0), shardRun(0, 1, slow, 0)
			f.Shard, s.Shard = nil, nil
			f.MixClass, s.MixClass = slo("ttft_p95:200"), slo("ttft_p95:200")
			f.Stats.TTFT = Summary{Count: 100, P50: 50.5, P90: 90.5, P95: 95.5, P99: 99.5}
			k := float64(10 * (i + 1))
			s.Stats.TTFT = Summary{Count: 100, P50: 50.5 * k, P90: 90.5 * k, P95: 95.5 * k, P99: 99.5 * k}
			r.Classes = map[string]*Run{"fast": f, "slow": s}
			runs = append(runs, r)
		}
		return runs
	}
	m, err := PoolRepeats(mixRuns())
	if err != nil {
		t.Fatal(err)
	}
	fast, slow := m.Classes["fast"], m.Classes["slow"]
	if fast == nil || slow == nil || len(m.Classes) != 2 {
		t.Fatalf("pooled classes %v", m.Classes)
	}
	for name, c := range m.Classes {
		if c.Requests.OK != 300 || c.WindowSeconds != 30 || c.Repeats == nil || c.Repeats.Count != 3 {
			t.Errorf("class %s: ok %d, window %g s, repeats %+v; want 300, 30, 3", name, c.Requests.OK, c.WindowSeconds, c.Repeats)
			continue
		}
		for i, e := range c.Repeats.Each {
			if e.Seed != uint64(i+1) {
				t.Errorf("class %s repeat %d: seed %d, want %d", name, i+1, e.Seed, i+1)
			}
		}
	}
	// fast: 1..100 ms every repeat, p95 95 ms; slow: p95 of 10..1000,
	// 20..2000 and 30..3000 ms together, far past 200 ms.
	if fast.MixClass == nil || fast.MixClass.MetSLO == nil || !*fast.MixClass.MetSLO ||
		slow.MixClass == nil || slow.MixClass.MetSLO == nil || *slow.MixClass.MetSLO {
		t.Errorf("verdicts: fast %+v, slow %+v; want fast met and slow missed", fast.MixClass, slow.MixClass)
	}
	if iv, ok := slow.Repeats.Intervals["ttft.p50"]; !ok || !(iv.Mean > 900 && iv.Mean < 1100) {
		t.Errorf("slow ttft.p50 across repeats %+v; want a mean near 1,000 ms (505, 1,010, 1,515)", iv)
	}
	runs := mixRuns()
	delete(runs[1].Classes, "slow")
	if _, err := PoolRepeats(runs); err == nil || !strings.Contains(err.Error(), "different mixes") {
		t.Errorf("repeats of different mixes pooled: %v", err)
	}
}

// TestRepeatsKeepServerAndSlices: what is not pooled across repeats is
// kept whole, repeat by repeat: the server's view and the time slices;
// the server's exact figures get an interval across the repeats, and a
// percentile the server gave only within a bucket gets none.
func TestRepeatsKeepServerAndSlices(t *testing.T) {
	var runs []*Run
	for i := range 3 {
		r := shardRun(0, 1, []int64{1000, 2000}, uint64(i+1))
		r.Shard = nil
		exact, point := 40+float64(i), 50.0
		r.Server = &Server{Source: "vllm", Figures: []Figure{{Name: "prefill ms/token", Server: &exact}, {Name: "TTFT p50", Server: &point, Estimate: true}}}
		r.SliceS, r.Slices = 5, []Slice{{StartS: 0, EndS: 5, Sent: int64(10 + i)}, {StartS: 5, EndS: 10, Sent: 3}}
		runs = append(runs, r)
	}
	m, err := PoolRepeats(runs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Server != nil || m.Slices != nil {
		t.Errorf("the pooled run carries a server view or slices of one repeat: %+v, %d slices", m.Server, len(m.Slices))
	}
	for i, e := range m.Repeats.Each {
		if e.Server != runs[i].Server || e.SliceS != 5 || len(e.Slices) != 2 || e.Slices[0].Sent != int64(10+i) {
			t.Errorf("repeat %d keeps server %p (want %p), %g s slices, %+v", i+1, e.Server, runs[i].Server, e.SliceS, e.Slices)
		}
	}
	iv, ok := m.Repeats.ServerIntervals["prefill ms/token"]
	if !ok || math.Abs(iv.Mean-41) > 1e-9 || iv.HalfWidth <= 0 {
		t.Errorf("the server's prefill ms/token across repeats: %+v (found %v), want mean 41 and a width", iv, ok)
	}
	if iv, ok := m.Repeats.ServerIntervals["TTFT p50"]; ok {
		t.Errorf("a bucket estimate has an interval: %+v", iv)
	}
	notes := strings.Join(m.Notes, "\n")
	for _, want := range []string{"repeats.each[].server", "repeats.each[].slices"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes do not say where %s is: %q", want, m.Notes)
		}
	}
}

// TestInterruptedRepeatLeftOutOfIntervals: a repeat cut short by a
// signal is pooled and kept, marked, but no interval counts it; with
// fewer than two whole repeats left, no figure has an interval.
func TestInterruptedRepeatLeftOutOfIntervals(t *testing.T) {
	mk := func(rate float64, cut bool, seed uint64) *Run {
		var v []int64
		for j := range 100 {
			v = append(v, int64(1000*(j+1)))
		}
		r := shardRun(0, 1, v, seed)
		r.Shard = nil
		r.Throughput.RequestsPerS, r.Interrupted = rate, cut
		return r
	}
	for _, tc := range []struct {
		name      string
		runs      []*Run
		intervals bool
		warn      string
	}{
		{"one of three cut", []*Run{mk(3, false, 1), mk(1.5, true, 2), mk(3.1, false, 3)}, true, "across the 2 whole repeats only"},
		{"one of two cut", []*Run{mk(3, false, 1), mk(1.5, true, 2)}, false, "no figure has an interval"},
	} {
		m, err := PoolRepeats(tc.runs)
		if err != nil {
			t.Fatal(err)
		}
		iv, ok := m.Repeats.Intervals["throughput"]
		if ok != tc.intervals || (ok && math.Abs(iv.Mean-3.05) > 1e-9) {
			t.Errorf("%s: throughput interval %+v (%v), want one only over the whole repeats", tc.name, iv, ok)
		}
		if !m.Repeats.Each[1].Interrupted || !m.Interrupted {
			t.Errorf("%s: the cut repeat is not marked", tc.name)
		}
		if !strings.Contains(strings.Join(m.Warnings, "\n"), tc.warn) {
			t.Errorf("%s: warnings %v, want %q", tc.name, m.Warnings, tc.warn)
		}
	}
}
