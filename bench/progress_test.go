package bench

import (
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// TestRecentForgetsOldBeats: the recent percentiles are those of what the
// histogram gained over the last beats only. Slow requests early in a
// level leave the recent view once they are more than the window old.
func TestRecentForgetsOldBeats(t *testing.T) {
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	r := newRecent(2)
	steps := []struct {
		value, count int64 // recorded before the beat (µs)
		p50          float64
		n            int64
	}{
		{value: 900_000, count: 10, p50: 900, n: 10}, // a slow start
		{value: 20_000, count: 30, p50: 20, n: 40},   // the window holds both: 30 of 40 fast
		{value: 20_000, count: 30, p50: 20, n: 60},   // the slow beat has left the window
		{count: 0, p50: 20, n: 30},                   // a quiet beat: only the last gain
		{count: 0, p50: 0, n: 0},                     // nothing in the window
	}
	for i, s := range steps {
		if s.count > 0 {
			if err := h.RecordValues(s.value, s.count); err != nil {
				t.Fatal(err)
			}
		}
		p50, _, n := r.add(h)
		if n != s.n || (p50 < s.p50*0.99 || p50 > s.p50*1.01) {
			t.Errorf("beat %d: p50 %.1f ms of %d values, want %.1f of %d", i, p50, n, s.p50, s.n)
		}
	}
}
