package results

import (
	"math"
	"strconv"
)

// Slice is one stretch of a level's window (--slice): what arrived in
// it, what finished in it, and the latencies of the requests that arrived
// in it, so a level that drifts through its window shows where.
type Slice struct {
	// StartS and EndS are from the window's start.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// Sent and Failed count the requests due in the slice (by their
	// scheduled arrival); Completed those that finished in it, and
	// OutputTokensPerS their output tokens over its width.
	Sent             int64   `json:"sent"`
	Failed           int64   `json:"failed"`
	Completed        int64   `json:"completed"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	// TTFTSched, TPOT and E2ESched are over the successful requests due
	// in the slice, in ms; TPOT is each request's mean inter-token time.
	TTFTSched SliceDist `json:"ttft_sched"`
	TPOT      SliceDist `json:"tpot"`
	E2ESched  SliceDist `json:"e2e_sched"`
	// Server is the server's gauges as last sampled in the slice (about
	// its end), when the server publishes them.
	Server *SliceGauges `json:"server,omitempty"`
	// Client is the client's account of itself over the slice, live.
	Client *SliceClient `json:"client,omitempty"`
	// Histograms, on a shard's slices, are their latencies' histograms
	// (µs, keyed "ttft_sched", "tpot", "e2e_sched", encoded as Run's), so
	// that a merge of the shards gives each slice the union's
	// percentiles (MergeRuns).
	Histograms Histograms `json:"histograms,omitempty"`
}

// SliceClient is the client's health over one slice: its verdict by the
// level's rules (timer lag and CPU; send lateness is the level's alone),
// the latest timer wake-up, the share of wake-ups later than the noisy
// bound (5 ms), and the client's CPU as a share of the machine.
type SliceClient struct {
	Verdict       string   `json:"verdict"`
	Reasons       []string `json:"reasons,omitempty"`
	TimerLagMaxMs float64  `json:"timer_lag_max_ms"`
	LateWakeups   float64  `json:"late_wakeups"`
	CPUPercent    float64  `json:"cpu_percent"`
}

// SliceGauges are the server's gauges at one instant of a slice: requests
// running and waiting, and the KV cache's use (0–1), each nil when the
// server does not publish it. AtS is the instant, from the window's
// start.
type SliceGauges struct {
	AtS          float64  `json:"at_s"`
	Running      *float64 `json:"running,omitempty"`
	Waiting      *float64 `json:"waiting,omitempty"`
	KVCacheUsage *float64 `json:"kv_cache_usage,omitempty"`
}

// SliceDist is a slice's percentiles of one latency, in ms. Count is how
// many requests they rest on; in a long level, a sample of them (each
// standing for several) that keeps the memory flat.
type SliceDist struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
}

// Span names the slice by its stretch of the window, to a tenth of a
// second ("10–20 s"): a window's last slice ends where the window did,
// not on a tenth, and a reader needs no more.
func (s Slice) Span() string {
	at := func(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }
	return at(s.StartS) + "–" + at(s.EndS) + " s"
}
