package summary

import (
	"testing"
	"time"
)

// TestQueueTrend: requests served as fast at the end of a window as at
// its start show no growth; a queue that builds shows the last third far
// behind the first; too few samples say nothing.
func TestQueueTrend(t *testing.T) {
	build := func(n int, age func(sched int) int) []completion {
		var out []completion
		for i := 0; i < n; i++ {
			sched := i * 60_000 / n // ms, over a 60 s window
			a := age(sched)
			out = append(out, completion{doneMs: int32(sched + a), ageMs: int32(a)})
		}
		return out
	}
	window := 60 * time.Second
	steady := build(300, func(s int) int { return 800 + (s*7919)%400 })
	if first, last, ok := queueTrend(steady, 0, window); !ok || last > first*13/10 || first > last*13/10 {
		t.Errorf("steady: %v then %v (ok %v), want alike", first, last, ok)
	}
	growing := build(300, func(s int) int { return 800 + s/4 }) // 0.8 s → 15.8 s
	if first, last, ok := queueTrend(growing, 0, window); !ok || last < 2*first {
		t.Errorf("growing: %v then %v (ok %v), want the last third far behind", first, last, ok)
	}
	if _, _, ok := queueTrend(build(20, func(int) int { return 100 }), 0, window); ok {
		t.Error("7 samples a third were compared")
	}
}
