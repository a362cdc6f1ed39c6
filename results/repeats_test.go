package results

import (
	"math"
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
