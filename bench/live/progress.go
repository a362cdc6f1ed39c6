package live

import (
	"context"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
)

// ProgressEvery is how often a running level reports its progress.
const ProgressEvery = 500 * time.Millisecond

// RecentWindow is how far back Progress's recent percentiles look.
const RecentWindow = 5 * time.Second

// Progress is a live snapshot of a running level (results.Progress).
type Progress = results.Progress

// startProgress calls progress every ProgressEvery until stopped, with
// the recent percentiles and the client's health when detail is asked.
func (l *live) startProgress(ctx context.Context, mon *health.Monitor, progress func(Progress), detail bool) (stop func()) {
	if progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(ProgressEvery)
		defer t.Stop()
		beats := int(RecentWindow / ProgressEvery)
		hists, ttft, itl := summary.NewLive(detail), newRecent(beats), newRecent(beats)
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if !detail {
					mon, ttft, itl = nil, nil, nil
				}
				progress(l.progress(mon, hists, ttft, itl))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// progress takes one snapshot: the counts and the level's TTFT, and with
// a monitor and recent windows, the recent percentiles and the health.
func (l *live) progress(mon *health.Monitor, hists *summary.Live, ttft, itl *recent) Progress {
	c := l.driver.Counts()
	l.sum.Live(hists)
	p := Progress{Elapsed: l.clock.Now(), Sent: c.Sent.Load(), OK: c.OK.Load(), InFlight: c.InFlight.Load(), Errors: c.Errors.Load()}
	if hists.TTFTSched.TotalCount() > 0 {
		p.TTFTP50ms, p.TTFTP95ms = float64(hists.TTFTSched.ValueAtPercentile(50))/1e3, float64(hists.TTFTSched.ValueAtPercentile(95))/1e3
	}
	if l.gauges != nil {
		p.Server, _ = l.gauges()
	}
	if mon == nil {
		return p
	}
	p.RecentTTFTP50ms, p.RecentTTFTP95ms, p.RecentCount = ttft.add(hists.TTFTSched)
	p.RecentITLP50ms, p.RecentITLP95ms, p.RecentTokens = itl.add(hists.ITL)
	rep := mon.Snapshot()
	late := hists.Lateness
	p.Health, _ = health.Verdict(rep, health.Sends{Total: late.TotalCount(), LatenessP99: time.Duration(late.ValueAtPercentile(99)) * time.Microsecond})
	p.TimerLagP99ms, p.CPUPercent = float64(rep.TimerLagP99)/1e6, 100*rep.CPUShare
	return p
}

// recent turns a histogram that only grows, read at every beat, into the
// percentiles of what it gained over the last few beats. It keeps the
// previous beat's counts and each beat's gain, sparse.
type recent struct {
	beats int
	prev  []int64
	gains [][]bucketGain
	sum   []int64
}

type bucketGain struct {
	idx int
	n   int64
}

func newRecent(beats int) *recent { return &recent{beats: max(beats, 1)} }

// add takes the histogram's state at this beat and returns the median and
// 95th percentile (ms) of the values it gained over the last beats, and
// how many there were.
func (r *recent) add(h *hdrhistogram.Histogram) (p50, p95 float64, n int64) {
	snap := h.Export()
	if r.prev == nil {
		r.prev, r.sum = make([]int64, len(snap.Counts)), make([]int64, len(snap.Counts))
	}
	var gain []bucketGain
	for i, c := range snap.Counts {
		if d := c - r.prev[i]; d > 0 {
			gain = append(gain, bucketGain{i, d})
		}
	}
	r.prev = snap.Counts
	r.gains = append(r.gains, gain)
	if len(r.gains) > r.beats {
		r.gains = r.gains[1:]
	}
	clear(r.sum)
	for _, g := range r.gains {
		for _, b := range g {
			r.sum[b.idx] += b.n
			n += b.n
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	snap.Counts = r.sum
	w := hdrhistogram.Import(snap)
	return float64(w.ValueAtPercentile(50)) / 1e3, float64(w.ValueAtPercentile(95)) / 1e3, n
}
