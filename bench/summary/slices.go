package summary

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kneebench/knee/results"
)

// tick is the resolution of the slice counts: a tenth of a second.
const tick = 100 * time.Millisecond

// tickCount is one tick's arrivals (by schedule) and completions.
type tickCount struct {
	sent, failed, completed, outTokens int64
}

// tickCounts are a shard's counts by tick, exact however long the run
// (a few dozen bytes a tick: an hour is 36,000 of them).
type tickCounts map[int32]*tickCount

func (t *tickCounts) at(d time.Duration) *tickCount {
	if *t == nil {
		*t = tickCounts{}
	}
	k := int32(d / tick)
	c := (*t)[k]
	if c == nil {
		c = &tickCount{}
		(*t)[k] = c
	}
	return c
}

func (t *tickCounts) sent(scheduled time.Duration, failed bool) {
	c := t.at(scheduled)
	c.sent++
	if failed {
		c.failed++
	}
}

func (t *tickCounts) completed(done time.Duration, out int64) {
	c := t.at(done)
	c.completed++
	c.outTokens += out
}

// sliceMicros is d in µs for a completion, -1 when there is none.
func sliceMicros(d time.Duration, ok bool) int32 {
	if !ok || d < 0 {
		return -1
	}
	return int32(min(d.Microseconds(), math.MaxInt32))
}

// slices cuts the window [start, end) into slices of width w: counts from
// the shards' ticks (exact), latencies from the completions kept (every
// one, or a weighted sample in a long level), by scheduled arrival. With
// keep, each slice keeps its latencies' histograms too (sliceHistograms).
func (c *collector) slices(start, end, w time.Duration, keep bool) []results.Slice {
	if w <= 0 || end <= start {
		return nil
	}
	// On the ticks' grid, so that a request's tick and its own time fall
	// in one slice: from the window's start when it set the grid
	// (SetOrigin), else from the last tick before it.
	origin := c.gridOrigin()
	start, w = origin+(start-origin)/tick*tick, max(w/tick*tick, tick)
	g := sliceGrid{start: start, w: w, n: int(math.Ceil(float64(end-start) / float64(w)))}
	out := make([]results.Slice, g.n)
	for i := range out {
		out[i].StartS = (time.Duration(i) * w).Seconds()
		out[i].EndS = min(time.Duration(i+1)*w, end-start).Seconds()
	}
	c.sliceTicks(out, g, origin)
	ttft, tpot, e2e := c.sliceLatencies(g)
	// One histogram, cleared for each slice's latencies: a fresh one is
	// 180 KB, and a shard's hour in 10 s slices would make a thousand.
	var h *hdrhistogram.Histogram
	if keep {
		h = newHist()
	}
	for i := range out {
		if width := out[i].EndS - out[i].StartS; width > 0 {
			out[i].OutputTokensPerS /= width
		}
		out[i].TTFTSched, out[i].TPOT, out[i].E2ESched = weightedDist(ttft[i]), weightedDist(tpot[i]), weightedDist(e2e[i])
		if keep {
			out[i].Histograms = results.Histograms{}
			for name, vs := range map[string][]weighted{"ttft_sched": ttft[i], "tpot": tpot[i], "e2e_sched": e2e[i]} {
				if len(vs) > 0 {
					out[i].Histograms[name] = weightedHistogram(h, vs)
				}
			}
		}
	}
	return out
}

// sliceGrid is the window's slices: n of width w from start.
type sliceGrid struct {
	start, w time.Duration
	n        int
}

// index is the slice d falls in, -1 past the last.
func (g sliceGrid) index(d time.Duration) int {
	switch {
	case d >= g.start+time.Duration(g.n)*g.w:
		return -1
	case d < g.start:
		// Measured, but due before the window opened: a closed loop's
		// stream due again as its warm-up request ended. It is the
		// window's, so its first slice's, for its count and its
		// latencies alike.
		return 0
	}
	return int((d - g.start) / g.w)
}

// sliceTicks adds the shards' ticks (sends, failures, completions,
// tokens) to their slices.
func (c *collector) sliceTicks(out []results.Slice, g sliceGrid, origin time.Duration) {
	for _, s := range c.shards {
		s.mu.Lock()
		for k, t := range s.ticks {
			at := origin + time.Duration(k)*tick
			if i := g.index(at); i >= 0 {
				out[i].Sent += t.sent
				out[i].Failed += t.failed
				out[i].Completed += t.completed
				out[i].OutputTokensPerS += float64(t.outTokens)
			}
		}
		s.mu.Unlock()
	}
}

// weighted is a kept completion's value and the requests it stands for.
type weighted struct{ v, w float64 }

// sliceLatencies is each slice's kept TTFT, TPOT and E2E (ms, from the
// schedule), by the slice each request was due in.
func (c *collector) sliceLatencies(g sliceGrid) (ttft, tpot, e2e [][]weighted) {
	ttft, tpot, e2e = make([][]weighted, g.n), make([][]weighted, g.n), make([][]weighted, g.n)
	for _, cp := range c.completions() {
		sched := time.Duration(int64(cp.doneMs)-int64(cp.ageMs)) * time.Millisecond
		i := g.index(sched)
		if i < 0 {
			continue
		}
		wt := cp.n()
		e2e[i] = append(e2e[i], weighted{float64(cp.ageMs), wt})
		if cp.ttftUs >= 0 {
			ttft[i] = append(ttft[i], weighted{float64(cp.ttftUs) / 1000, wt})
		}
		if cp.tpotUs >= 0 {
			tpot[i] = append(tpot[i], weighted{float64(cp.tpotUs) / 1000, wt})
		}
	}
	return ttft, tpot, e2e
}

// weightedDist is the weighted values' count and percentiles.
func weightedDist(vs []weighted) results.SliceDist {
	if len(vs) == 0 {
		return results.SliceDist{}
	}
	slices.SortFunc(vs, func(a, b weighted) int { return cmp.Compare(a.v, b.v) })
	total := 0.0
	for _, v := range vs {
		total += v.w
	}
	q := func(p float64) float64 {
		// The smallest value whose cumulative weight reaches p of the
		// total, as an HDR histogram's percentile is.
		target, acc := p*total, 0.0
		for _, v := range vs {
			acc += v.w
			if acc >= target {
				return v.v
			}
		}
		return vs[len(vs)-1].v
	}
	return results.SliceDist{Count: int64(math.Round(total)), P50: q(0.5), P95: q(0.95), P99: q(0.99)}
}

// weightedHistogram is the values in h (reset first), encoded: each kept
// completion stands for its weight's worth, whole requests, at least one.
// A value past the histogram's hour is clamped to it, as the run's own
// histograms clamp it (and count it once, there).
func weightedHistogram(h *hdrhistogram.Histogram, vs []weighted) string {
	h.Reset()
	for _, v := range vs {
		us := min(max(int64(math.Round(v.v*1000)), 1), histMaxMicros)
		_ = h.RecordValues(us, max(int64(math.Round(v.w)), 1))
	}
	return results.EncodeHistogram(h)
}

// sliceTrend says when TTFT rose through the window: over the slices
// with enough requests (the last, partial one left out), p50 TTFT from
// the schedule rank-correlates with time at 0.8 or more and the last
// third's median is twice the first third's. "" when it did not.
func sliceTrend(ss []results.Slice) string {
	var xs, ys []float64
	for i, s := range ss {
		full := i < len(ss)-1 || len(ss) == 1
		if s.TTFTSched.Count >= minTrendSamples && full {
			xs, ys = append(xs, float64(i)), append(ys, s.TTFTSched.P50)
		}
	}
	if len(ys) < 4 {
		return ""
	}
	third := len(ys) / 3
	first, last := median(ys[:third]), median(ys[len(ys)-third:])
	if spearman(xs, ys) < 0.8 || last < 2*first {
		return ""
	}
	return fmt.Sprintf("TTFT rose through the window: p50 from the schedule %.0f ms in its first slices, %.0f ms in its last (slices of %s in the JSON): the level did not settle, so its percentiles depend on how long it ran",
		first, last, time.Duration((ss[0].EndS-ss[0].StartS)*float64(time.Second)).Round(time.Millisecond))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spearman is the rank correlation of x and y (no ties in x).
func spearman(x, y []float64) float64 {
	rank := func(v []float64) []float64 {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
		r := make([]float64, len(v))
		for pos, i := range idx {
			r[i] = float64(pos)
		}
		return r
	}
	rx, ry := rank(x), rank(y)
	n := float64(len(x))
	var d2 float64
	for i := range rx {
		d := rx[i] - ry[i]
		d2 += d * d
	}
	return 1 - 6*d2/(n*(n*n-1))
}

// gridOrigin is the instant the slices' tick grid counts from.
func (c *collector) gridOrigin() time.Duration { return time.Duration(c.origin.Load()) }
