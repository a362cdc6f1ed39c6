package results

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// sliceAlignment is how far apart the shards' windows may have started
// for their slices to be joined index by index: a tenth of a slice, so
// that no slice holds more than a tenth of its neighbour's time.
const sliceAlignment = 0.1

// mergeSlices joins the shards' time slices index by index: counts and
// tokens summed, latencies from their histograms merged (the union's
// percentiles, as the run's), the server's gauges shard 0's (the one that
// reads them), the client's health the worst shard's. It says why it
// keeps none when the shards cut their windows differently, started too
// far apart, or were written without the slices' histograms.
func mergeSlices(m *Run, shards []*Run) error {
	width := shards[0].SliceS
	if width <= 0 {
		return nil
	}
	if why := slicesApart(m, shards, width); why != "" {
		m.Notes = append(m.Notes, "no time slices: "+why)
		return nil
	}
	n := 0
	for _, r := range shards {
		n = max(n, len(r.Slices))
	}
	m.SliceS, m.Slices = width, make([]Slice, n)
	for k := range m.Slices {
		if err := mergeSlice(&m.Slices[k], k, width, shards); err != nil {
			return err
		}
	}
	m.Notes = append(m.Notes, fmt.Sprintf("the time slices join the shards' slice by slice (their windows started within %.1f ms of one another): counts summed, percentiles of the union's requests (their histograms merged), the server's gauges shard 0's, the client's health the worst shard's",
		1000*spread(shards)))
	return nil
}

// slicesApart is why the shards' slices cannot be joined ("" when they
// can): another width, windows apart by more than a tenth of a slice, or
// a file without the slices' histograms.
func slicesApart(m *Run, shards []*Run, width float64) string {
	for i, r := range shards {
		switch {
		case r.SliceS != width:
			return fmt.Sprintf("shard %d cut its window into slices of %g s, shard 0 into %g s", i, r.SliceS, width)
		case r.WindowStartedAt.Sub(m.WindowStartedAt).Seconds() > sliceAlignment*width:
			return fmt.Sprintf("shard %d's window started %.2f s after the first's, more than a tenth of a slice (%g s), so their slices cover different times",
				i, r.WindowStartedAt.Sub(m.WindowStartedAt).Seconds(), width)
		}
		for _, sl := range r.Slices {
			if sl.TTFTSched.Count+sl.TPOT.Count+sl.E2ESched.Count > 0 && len(sl.Histograms) == 0 {
				return fmt.Sprintf("shard %d's file keeps no histograms for its slices (written by an older knee), and percentiles cannot be merged without them", i)
			}
		}
	}
	return ""
}

// mergeSlice joins the shards' slice k into out: counts summed, tokens
// over the slice's width, histograms merged, the server's gauges shard
// 0's and the client's health the worst shard's.
func mergeSlice(out *Slice, k int, width float64, shards []*Run) error {
	out.StartS = float64(k) * width
	out.EndS = out.StartS
	var tokens float64
	clients := make([]*SliceClient, len(shards))
	merged := map[string]*hdrhistogram.Histogram{}
	for i, r := range shards {
		if k >= len(r.Slices) {
			continue
		}
		sl := r.Slices[k]
		out.EndS = max(out.EndS, sl.EndS)
		out.Sent += sl.Sent
		out.Failed += sl.Failed
		out.Completed += sl.Completed
		tokens += sl.OutputTokensPerS * (sl.EndS - sl.StartS)
		if i == 0 {
			out.Server = sl.Server
		}
		clients[i] = sl.Client
		for name, enc := range sl.Histograms {
			h, err := DecodeHistogram(enc)
			if err != nil {
				return fmt.Errorf("shard %d, slice %d, %s: %w", i, k, name, err)
			}
			if merged[name] == nil {
				merged[name] = h
			} else {
				merged[name].Merge(h)
			}
		}
	}
	if w := out.EndS - out.StartS; w > 0 {
		out.OutputTokensPerS = tokens / w
	}
	out.Histograms = Histograms{}
	for name, dist := range map[string]*SliceDist{"ttft_sched": &out.TTFTSched, "tpot": &out.TPOT, "e2e_sched": &out.E2ESched} {
		if h := merged[name]; h != nil && h.TotalCount() > 0 {
			*dist = sliceDist(h)
			out.Histograms[name] = EncodeHistogram(h)
		}
	}
	out.Client = worstSliceClient(clients)
	return nil
}

// sliceDist is a histogram of µs as a slice's percentiles, in ms.
func sliceDist(h *hdrhistogram.Histogram) SliceDist {
	q := func(p float64) float64 { return float64(h.ValueAtPercentile(p)) / 1000 }
	return SliceDist{Count: h.TotalCount(), P50: q(50), P95: q(95), P99: q(99)}
}

// spread is how far apart, in seconds, the shards' windows started.
func spread(shards []*Run) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range shards {
		t := float64(r.WindowStartedAt.UnixNano()) / 1e9
		lo, hi = min(lo, t), max(hi, t)
	}
	return hi - lo
}

// worstSliceClient is the worst of the shards' verdicts on a slice (cs
// by shard, nil where a shard did not judge it), its reasons named by
// shard; its figures are the largest any shard saw (each of its own
// machine). Nil when no shard judged the slice.
func worstSliceClient(cs []*SliceClient) *SliceClient {
	rank := map[string]int{VerdictHealthy: 1, VerdictNoisy: 2, VerdictClientLimited: 3, VerdictHostStarved: 3}
	var out *SliceClient
	worst := -1
	for i, c := range cs {
		if c == nil {
			continue
		}
		if out == nil {
			out = &SliceClient{}
		}
		out.TimerLagMaxMs = max(out.TimerLagMaxMs, c.TimerLagMaxMs)
		out.LateWakeups = max(out.LateWakeups, c.LateWakeups)
		out.CPUPercent = max(out.CPUPercent, c.CPUPercent)
		if worst < 0 || rank[c.Verdict] > rank[cs[worst].Verdict] {
			worst = i
		}
	}
	if out == nil {
		return nil
	}
	out.Verdict = cs[worst].Verdict
	for _, r := range cs[worst].Reasons {
		out.Reasons = append(out.Reasons, fmt.Sprintf("shard %d: %s", worst, r))
	}
	return out
}
