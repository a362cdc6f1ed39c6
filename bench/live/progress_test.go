package live

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/health"
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

// BenchmarkProgress is the cost of one progress beat (two a second) after
// 20,000 requests of 64 tokens with spread latencies: the counts and the
// level's TTFT for the progress line, and the detail a live view adds.
func BenchmarkProgress(b *testing.B) {
	for _, detail := range []bool{false, true} {
		name := "line"
		if detail {
			name = "live-view"
		}
		b.Run(name, func(b *testing.B) {
			sum := summary.New(summary.Level{Load: driver.Load{Rate: 1000, Burstiness: 1}}, 8)
			for i := range 20_000 {
				r := &record.Record{Index: i, Scheduled: time.Duration(i) * time.Millisecond, Status: 200, Chunks: 64, CompletionTokens: 64}
				r.Sent = r.Scheduled + time.Duration(i%50)*time.Microsecond
				r.Lateness = r.Sent - r.Scheduled
				r.FirstToken = r.Sent + time.Duration(20+i%300)*time.Millisecond
				for k := range 64 {
					r.ChunkTimes = append(r.ChunkTimes, r.FirstToken+time.Duration(k)*time.Duration(7+i%5)*time.Millisecond)
				}
				r.LastToken = r.ChunkTimes[63]
				r.Done = r.LastToken
				sum.Add(r)
			}
			clock := driver.NewWallClock(time.Now())
			l := &live{clock: clock, sum: sum, driver: driver.New(driver.Options{Clock: clock})}
			mon := health.Start(health.DefaultInterval)
			defer mon.Stop()
			hists, ttft, itl := summary.NewLive(detail), newRecent(10), newRecent(10)
			if !detail {
				mon, ttft, itl = nil, nil, nil
			}
			b.ReportAllocs()
			for b.Loop() {
				l.progress(mon, hists, ttft, itl)
			}
		})
	}
}
