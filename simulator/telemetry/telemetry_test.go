package telemetry

import (
	"math"
	"testing"
	"time"

	"github.com/kneebench/knee/simulator/sched"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestPercentileIsNumpys: ranks interpolate at p/100·(n−1), as numpy's
// default and vLLM's and SGLang's bench reports compute them.
func TestPercentileIsNumpys(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	for p, want := range map[float64]float64{0: 1, 50: 2.5, 90: 3.7, 95: 3.85, 100: 4} {
		if got := Percentile(v, p); math.Abs(got-want) > 1e-12 {
			t.Errorf("p%g of %v = %g, want %g", p, v, got, want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("an empty distribution's percentile is not 0")
	}
}

// TestRingKeepsTheLast: a window keeps its last values and counts all.
func TestRingKeepsTheLast(t *testing.T) {
	r := newRing(5)
	for i := 1; i <= 12; i++ {
		r.push(float64(i))
	}
	s := r.stats()
	if s.Count != 12 || s.Samples != 5 || s.Min != 8 || s.Max != 12 || s.Mean != 10 || s.P50 != 10 {
		t.Errorf("stats %+v, want the last five of twelve, 8 to 12", s)
	}
	r.reset()
	if s := r.stats(); s.Count != 0 || s.Samples != 0 {
		t.Errorf("after reset %+v", s)
	}
}

// TestSummaryOfAPeriod: requests and tokens recorded are counted and
// summarised, server and simulated apart; a request that generated
// nothing counts but adds no latency; the first token has no gap; a reset
// starts afresh.
func TestSummaryOfAPeriod(t *testing.T) {
	s := NewSummary("scheduler")
	now := time.Now()
	s.SetRunning(2)
	for i := range 3 {
		s.Token(true, 0, 0, time.Millisecond, now)
		s.Token(false, 0.010, 0.008, 2*time.Millisecond, now)
		s.Token(false, 0.030, 0.028, 3*time.Millisecond, now)
		srv := RequestTimes{TTFT: 0.1 * float64(i+1), TPOT: 0.02, E2E: 1, Queue: 0.01, HasTPOT: true}
		sim := RequestTimes{TTFT: 0.09 * float64(i+1), TPOT: 0.018, E2E: 0.9, HasTPOT: true}
		s.Finish("length", 100, 3, 40, srv, sim, now)
	}
	s.Finish("abort", 50, 0, 0, RequestTimes{TTFT: 99}, RequestTimes{TTFT: 99}, now)
	s.Fault("reset")
	s.SetRunning(-1)
	snap := s.Snapshot()
	if snap.Requests.Total != 4 || snap.Requests.Running != 1 || snap.Requests.Finished["length"] != 3 || snap.Requests.Finished["abort"] != 1 {
		t.Errorf("requests %+v", snap.Requests)
	}
	if snap.Tokens != (TokenCounts{Prompt: 350, Generated: 9, Cached: 120}) {
		t.Errorf("tokens %+v", snap.Tokens)
	}
	if ttft := snap.Server["ttft"]; ttft.Count != 3 || math.Abs(ttft.P50-0.2) > 1e-12 || ttft.Max > 0.31 {
		t.Errorf("server TTFT %+v: the aborted request's 99 s must not count", ttft)
	}
	if ttft := snap.Simulated["ttft"]; math.Abs(ttft.P50-0.18) > 1e-12 {
		t.Errorf("simulated TTFT %+v", ttft)
	}
	if itl := snap.Server["itl"]; itl.Count != 6 || math.Abs(itl.Mean-0.020) > 1e-12 {
		t.Errorf("server ITL %+v: two gaps per request, first tokens have none", itl)
	}
	if snap.Lag.Count != 9 || snap.Faults["reset"] != 1 {
		t.Errorf("lag %+v, faults %v", snap.Lag, snap.Faults)
	}
	if snap.Throughput.OutputTokensPerS <= 0 || snap.Throughput.RequestsPerS <= 0 {
		t.Errorf("throughput %+v", snap.Throughput)
	}
	s.Reset()
	if snap := s.Snapshot(); snap.Requests.Total != 0 || snap.Server["ttft"].Count != 0 || snap.Tokens.Generated != 0 || snap.Faults != nil {
		t.Errorf("after reset %+v", snap)
	}
}

// steps are three scheduler steps: compute-bound with a queue stopped by
// a full batch, memory-bound with a preemption, and a quiet one.
func steps() []*sched.Step {
	return []*sched.Step{
		{Duration: 0.040, Compute: 2, Memory: 1, BatchSize: 8, ScheduledTokens: 2048, StopReason: sched.StopBatchFull, Running: 8, Waiting: 5,
			KVUsage: 0.5, PrefixQueries: 1000, PrefixHit: 750},
		{Duration: 0.010, Compute: 1, Memory: 2, BatchSize: 8, ScheduledTokens: 8, StopReason: sched.StopPreempted, Running: 7, Waiting: 6,
			KVUsage: 0.9, Preempted: []*sched.Seq{{}}},
		{Duration: 0.008, Compute: 1, Memory: 2, BatchSize: 7, ScheduledTokens: 7, StopReason: sched.StopNone, Running: 7, Waiting: 0, KVUsage: 0.8},
	}
}

// TestStepSummary: steps are counted by what bounded them and why
// admission stopped (a quiet step with nothing waiting is no stop), with
// preemptions and the prefix cache's hit rate.
func TestStepSummary(t *testing.T) {
	s := NewStepSummary()
	for _, st := range steps() {
		s.Observe(st, time.Millisecond)
	}
	got := s.Snapshot(7, 0, 0.8, 1000, 16)
	if got.Steps != 3 || got.ComputeBound != 1 || got.MemoryBound != 2 || got.Preemptions != 1 || got.PrefixHitRate != 0.75 {
		t.Errorf("summary %+v", got)
	}
	if len(got.AdmissionStops) != 2 || got.AdmissionStops[sched.StopBatchFull] != 1 || got.AdmissionStops[sched.StopPreempted] != 1 {
		t.Errorf("admission stops %v", got.AdmissionStops)
	}
	if got.BatchSize.Max != 8 || got.ScheduledTokens.Max != 2048 || got.NumBlocks != 1000 {
		t.Errorf("distributions %+v", got)
	}
	s.Reset()
	if got := s.Snapshot(0, 0, 0, 1000, 16); got.Steps != 0 || len(got.AdmissionStops) != 0 {
		t.Errorf("after reset %+v", got)
	}
}

// TestMetricsAsVLLMNamesThem: the collectors carry vLLM's names, labels
// and buckets, and a step moves the gauges and counters it should.
func TestMetricsAsVLLMNamesThem(t *testing.T) {
	m := NewMetrics(131072)
	mm := m.ForModel("llama")
	for _, st := range steps() {
		mm.ObserveStep(st)
	}
	mm.TTFT.Observe(0.05)
	if got := testutil.ToFloat64(mm.Running); got != 7 {
		t.Errorf("vllm:num_requests_running %g, want 7", got)
	}
	if got := testutil.ToFloat64(mm.KVUsage); got != 0.8 {
		t.Errorf("vllm:kv_cache_usage_perc %g, want 0.8", got)
	}
	if got := testutil.ToFloat64(mm.PrefixHits); got != 750 {
		t.Errorf("vllm:prefix_cache_hits_total %g", got)
	}
	if got := testutil.ToFloat64(m.steps.WithLabelValues("llama", "0", "compute")); got != 1 {
		t.Errorf("knee_sim_steps_total{bound=compute} %g", got)
	}
	families, err := m.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
		if f.GetName() == "vllm:time_to_first_token_seconds" {
			h := f.GetMetric()[0].GetHistogram()
			if len(h.GetBucket()) != len(bucketsTTFT) || h.GetSampleCount() != 1 {
				t.Errorf("TTFT histogram: %d buckets, %d samples", len(h.GetBucket()), h.GetSampleCount())
			}
			labels := f.GetMetric()[0].GetLabel()
			if labels[0].GetName() != "engine" || labels[1].GetValue() != "llama" {
				t.Errorf("labels %v", labels)
			}
		}
	}
	for _, want := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:iteration_tokens_total", "vllm:num_preemptions_total",
		"vllm:prefix_cache_queries_total", "knee_sim_step_duration_seconds"} {
		if !names[want] {
			t.Errorf("%s not published (have %d families)", want, len(names))
		}
	}
	if b := tokenBuckets(131072); b[0] != 1 || b[1] != 2 || b[2] != 5 || b[len(b)-1] != 100000 {
		t.Errorf("token buckets %v, want vLLM's 1-2-5 series to the context", b)
	}
}
