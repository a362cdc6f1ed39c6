package results

import (
	"strings"
	"testing"
	"time"
)

// TestPoolRunFiles: repeats' own files pool as --repeat would, in the
// order they ran, a repeat merged from its shards among them; the same
// seed twice is warned of; shards' parts, pooled files and another
// configuration are refused, naming what to do or what differs.
func TestPoolRunFiles(t *testing.T) {
	repeat := func(seed uint64, minute int) *Run {
		r := shardRun(0, 1, []int64{1000 * int64(seed), 2000 * int64(seed)}, seed)
		r.Shard = nil
		r.StartedAt = r.StartedAt.Add(time.Duration(minute) * time.Minute)
		return r
	}
	a, c := repeat(1, 0), repeat(3, 2)
	// Repeat 2 was sharded two ways, its shards merged.
	b, err := MergeRuns([]*Run{shardRun(0, 2, []int64{2000}, 2), shardRun(1, 2, []int64{4000}, 2)})
	if err != nil {
		t.Fatal(err)
	}
	b.StartedAt = a.StartedAt.Add(time.Minute)
	m, err := PoolRunFiles([]*Run{c, a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.Repeats == nil || m.Repeats.Count != 3 || m.Requests.OK != 6 {
		t.Fatalf("pooled %d requests, repeats %+v; want 6 of 3", m.Requests.OK, m.Repeats)
	}
	for i, seed := range []uint64{1, 2, 3} {
		if got := m.Repeats.Each[i].Seed; got != seed {
			t.Errorf("repeat %d has seed %d, want %d (the order they ran in)", i+1, got, seed)
		}
	}
	if strings.Contains(strings.Join(m.Warnings, "\n"), "same seed") {
		t.Errorf("a warning of seeds alike where none were: %q", m.Warnings)
	}
	same, err := PoolRunFiles([]*Run{repeat(5, 0), repeat(5, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(same.Warnings, "\n"), "repeats 1, 2 (seed 5) drew the same seed") {
		t.Errorf("two repeats of seed 5 not warned of: %q", same.Warnings)
	}

	other := repeat(4, 3)
	other.Config.Rate = 20
	for _, bad := range []struct {
		runs []*Run
		want string
	}{
		{[]*Run{a}, "two files or more"},
		{[]*Run{a, shardRun(1, 2, []int64{1000}, 9)}, "merge each repeat's shards first"},
		{[]*Run{a, m}, "already pooled from 3 repeats"},
		{[]*Run{a, other}, "rate"},
	} {
		if _, err := PoolRunFiles(bad.runs); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("want an error saying %q, got %v", bad.want, err)
		}
	}
}

// TestPoolPassesKeepsLevelsApart: a load swept twice in a pass (4/s, then
// 4/s again) pools each level with the same place in the other passes,
// not both with the first.
func TestPoolPassesKeepsLevelsApart(t *testing.T) {
	pass := func(seed uint64) *Sweep {
		s := &Sweep{SchemaVersion: SchemaVersion, Axis: "rate"}
		for k, ttft := range []int64{1000, 90000} {
			r := shardRun(0, 1, []int64{ttft * int64(seed)}, seed)
			r.Shard = nil
			r.StartedAt = r.StartedAt.Add(time.Duration(k) * time.Minute)
			s.Levels = append(s.Levels, Level{Load: 4, Run: r})
		}
		return s
	}
	s := pass(1)
	PoolPasses(s, []*Sweep{pass(1), pass(2)}, 2)
	// Each level pools its own TTFTs, x and 2x: the union's largest is 2x.
	for k, want := range []float64{2, 180} {
		r := s.Levels[k].Run
		if r == nil || r.Repeats == nil {
			t.Fatalf("level %d not pooled: %+v", k, s.Levels[k])
		}
		if got := r.Stats.TTFT.Max; got < want*0.99 || got > want*1.01 {
			t.Errorf("level %d: pooled TTFT max %g ms, want %g (its own place's repeats)", k, got, want)
		}
	}
}
