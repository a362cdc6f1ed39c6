package telemetry

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/kneebench/knee/simulator/sched"
)

// Window sizes of /metrics/summary: per-request values over the last
// 10,000 requests, per-token values over the last 100,000 tokens.
const (
	requestWindow = 10_000
	tokenWindow   = 100_000
)

// ring keeps the last len(buf) values.
type ring struct {
	buf   []float64
	n     int // values ever pushed since reset
	count int64
}

func newRing(size int) *ring { return &ring{buf: make([]float64, 0, size)} }

func (r *ring) push(v float64) {
	if len(r.buf) < cap(r.buf) {
		r.buf = append(r.buf, v)
	} else {
		r.buf[r.n%cap(r.buf)] = v
	}
	r.n++
	r.count++
}

func (r *ring) reset() { r.buf, r.n, r.count = r.buf[:0], 0, 0 }

// Stats is the summary of one distribution, in seconds.
type Stats struct {
	Count   int64   `json:"count"`
	Samples int     `json:"samples"`
	Mean    float64 `json:"mean"`
	Min     float64 `json:"min"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P95     float64 `json:"p95"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
}

// Percentile interpolates linearly between the closest ranks, at rank
// p/100·(n−1), as numpy's default does (and so vLLM's and SGLang's bench
// reports). sorted must be sorted.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	if lo == hi {
		return sorted[lo]
	}
	return sorted[lo] + (sorted[hi]-sorted[lo])*(rank-float64(lo))
}

func (r *ring) stats() Stats {
	s := Stats{Count: r.count, Samples: len(r.buf)}
	if len(r.buf) == 0 {
		return s
	}
	v := slices.Clone(r.buf)
	slices.Sort(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	s.Mean = sum / float64(len(v))
	s.Min, s.Max = v[0], v[len(v)-1]
	s.P50, s.P90, s.P95, s.P99 = Percentile(v, 50), Percentile(v, 90), Percentile(v, 95), Percentile(v, 99)
	return s
}

// summaryMetrics names the distributions of the summary.
var summaryMetrics = []string{"ttft", "itl", "tpot", "e2e", "queue", "prefill", "decode"}

// view is one account (server or simulated) of every distribution.
type view map[string]*ring

func newView() view {
	v := view{}
	for _, name := range summaryMetrics {
		size := requestWindow
		if name == "itl" {
			size = tokenWindow
		}
		v[name] = newRing(size)
	}
	return v
}

// Summary holds one model's measurement period.
type Summary struct {
	mu        sync.Mutex
	engine    string
	since     time.Time
	server    view
	simulated view
	lag       *ring
	// The token windows, looked up once rather than per token.
	serverITL, simulatedITL *ring
	finished                map[string]int64
	running                 int64
	prompt                  int64
	generated               int64
	cached                  int64
	requests                int64
	faults                  map[string]int64
	// phases, for a disaggregated model, split its time to first token.
	phases phaseRings
	// perSecond counts finished requests and output tokens per wall second
	// over the last minute, for throughput.
	secReq, secTok [60]int64
	secStamp       [60]int64
}

// NewSummary starts a model's measurement period now; engine names the
// engine that times its tokens.
func NewSummary(engine string) *Summary {
	s := &Summary{engine: engine, since: time.Now(), server: newView(), simulated: newView(),
		lag: newRing(tokenWindow), finished: map[string]int64{}, faults: map[string]int64{}}
	s.serverITL, s.simulatedITL = s.server["itl"], s.simulated["itl"]
	return s
}

// Reset starts a new measurement period now (POST /metrics/summary/reset,
// which knee calls as a measured window starts).
func (s *Summary) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range []view{s.server, s.simulated} {
		for _, r := range v {
			r.reset()
		}
	}
	s.lag.reset()
	s.resetPhases()
	s.finished = map[string]int64{}
	s.faults = map[string]int64{}
	s.prompt, s.generated, s.cached, s.requests = 0, 0, 0, 0
	s.secReq, s.secTok, s.secStamp = [60]int64{}, [60]int64{}, [60]int64{}
	s.since = time.Now()
}

// Token records one released token: its gap to the previous one (server
// and simulated) and its lag.
func (s *Summary) Token(first bool, gap, simGap float64, lag time.Duration, now time.Time) {
	s.mu.Lock()
	if !first {
		s.serverITL.push(gap)
		s.simulatedITL.push(simGap)
	}
	s.lag.push(lag.Seconds())
	sec := now.Unix()
	i := sec % 60
	if s.secStamp[i] != sec {
		s.secStamp[i], s.secReq[i], s.secTok[i] = sec, 0, 0
	}
	s.secTok[i]++
	s.mu.Unlock()
}

// RequestTimes is one finished request's account, in seconds.
type RequestTimes struct {
	TTFT, TPOT, E2E, Queue, Prefill, Decode float64
	HasTPOT                                 bool
}

// Pooled, as Finish's generated, marks a pooling model's answer: it
// generated no token, and its times count all the same.
const Pooled = -1

// Finish records a finished request: why it finished, its token counts
// and its times as the server released them and as simulated. A request
// that generated nothing (but a pooling model's answer, Pooled) adds to
// the counts, not to the distributions.
func (s *Summary) Finish(reason string, prompt, generated, cached int, server, sim RequestTimes, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished[reason]++
	s.requests++
	s.prompt += int64(prompt)
	s.generated += int64(max(generated, 0))
	s.cached += int64(cached)
	if generated > 0 || generated == Pooled {
		for _, p := range []struct {
			v view
			t RequestTimes
		}{{s.server, server}, {s.simulated, sim}} {
			p.v["ttft"].push(p.t.TTFT)
			p.v["e2e"].push(p.t.E2E)
			p.v["queue"].push(p.t.Queue)
			p.v["prefill"].push(p.t.Prefill)
			p.v["decode"].push(p.t.Decode)
			if p.t.HasTPOT {
				p.v["tpot"].push(p.t.TPOT)
			}
		}
	}
	sec := now.Unix()
	i := sec % 60
	if s.secStamp[i] != sec {
		s.secStamp[i], s.secReq[i], s.secTok[i] = sec, 0, 0
	}
	s.secReq[i]++
}

// Fault counts a fault injected on purpose.
func (s *Summary) Fault(kind string) {
	s.mu.Lock()
	s.faults[kind]++
	s.mu.Unlock()
}

// SetRunning moves the count of requests in progress by delta.
func (s *Summary) SetRunning(delta int64) {
	s.mu.Lock()
	s.running += delta
	s.mu.Unlock()
}

// ModelSummary is one model's entry in /metrics/summary.
type ModelSummary struct {
	Engine string    `json:"engine"`
	Since  time.Time `json:"since"`
	// At is when the summary was taken: with Since, the interval it covers.
	At         time.Time         `json:"at"`
	Requests   RequestCounts     `json:"requests"`
	Tokens     TokenCounts       `json:"tokens"`
	Throughput Throughput        `json:"throughput"`
	Server     map[string]Stats  `json:"server"`
	Simulated  map[string]Stats  `json:"simulated"`
	Lag        Stats             `json:"lag"`
	Faults     map[string]int64  `json:"faults,omitempty"`
	Scheduler  *SchedulerSummary `json:"scheduler,omitempty"`
	// Phases splits a disaggregated model's time to first token, in
	// seconds: prefill_queue, prefill, kv_transfer, decode_queue and
	// first_decode_step.
	Phases map[string]Stats `json:"phases,omitempty"`
}

// RequestCounts counts requests of the period.
type RequestCounts struct {
	Running  int64            `json:"running"`
	Total    int64            `json:"total"`
	Finished map[string]int64 `json:"finished"`
}

// TokenCounts totals tokens of the period.
type TokenCounts struct {
	Prompt    int64 `json:"prompt"`
	Generated int64 `json:"generated"`
	Cached    int64 `json:"cached"`
}

// Throughput is measured over the last 60 seconds (or the period, if
// shorter).
type Throughput struct {
	WindowS          float64 `json:"window_s"`
	RequestsPerS     float64 `json:"requests_per_s"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
}

// Snapshot is the period so far: counts, tokens, exact percentiles of
// the windows kept, and throughput over the last minute.
func (s *Summary) Snapshot() ModelSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := ModelSummary{
		Engine: s.engine, Since: s.since.UTC(), At: time.Now().UTC(),
		Requests: RequestCounts{Running: s.running, Total: s.requests, Finished: map[string]int64{}},
		Tokens:   TokenCounts{Prompt: s.prompt, Generated: s.generated, Cached: s.cached},
		Server:   map[string]Stats{}, Simulated: map[string]Stats{},
		Lag: s.lag.stats(), Phases: s.phaseStats(),
	}
	for k, v := range s.finished {
		out.Requests.Finished[k] = v
	}
	if len(s.faults) > 0 {
		out.Faults = map[string]int64{}
		for k, v := range s.faults {
			out.Faults[k] = v
		}
	}
	for _, name := range summaryMetrics {
		out.Server[name] = s.server[name].stats()
		out.Simulated[name] = s.simulated[name].stats()
	}
	now := time.Now()
	window := math.Min(60, now.Sub(s.since).Seconds())
	var req, tok int64
	for i := range s.secStamp {
		if age := now.Unix() - s.secStamp[i]; age >= 0 && age < 60 && s.secStamp[i] >= s.since.Unix() {
			req += s.secReq[i]
			tok += s.secTok[i]
		}
	}
	if window > 0 {
		out.Throughput = Throughput{WindowS: window, RequestsPerS: float64(req) / window, OutputTokensPerS: float64(tok) / window}
	}
	return out
}

// SchedulerSummary is what the scheduler engine's steps did in the period.
type SchedulerSummary struct {
	Steps           int64            `json:"steps"`
	ComputeBound    int64            `json:"compute_bound_steps"`
	MemoryBound     int64            `json:"memory_bound_steps"`
	BatchSize       Stats            `json:"batch_size"`
	ScheduledTokens Stats            `json:"scheduled_tokens"`
	StepDuration    Stats            `json:"step_duration"`
	StepLag         Stats            `json:"step_lag"`
	AdmissionStops  map[string]int64 `json:"admission_stops"`
	Preemptions     int64            `json:"preemptions"`
	PrefixQueries   int64            `json:"prefix_cache_queries"`
	PrefixHits      int64            `json:"prefix_cache_hits"`
	PrefixHitRate   float64          `json:"prefix_cache_hit_rate"`
	Running         int              `json:"running"`
	Waiting         int              `json:"waiting"`
	KVUsage         float64          `json:"kv_cache_usage"`
	NumBlocks       int              `json:"num_gpu_blocks"`
	BlockSize       int              `json:"block_size"`
	// AdapterLoads is a LoRA model's adapters loaded into a slot since
	// the reset, swaps included.
	AdapterLoads *int64 `json:"adapter_loads,omitempty"`
}

// StepSummary accumulates scheduler steps for the summary.
type StepSummary struct {
	mu                    sync.Mutex
	steps, compute, mem   int64
	batch, tokens, dur    *ring
	lag                   *ring
	stops                 map[string]int64
	preempt, queries, hit int64
}

// NewStepSummary is an empty account of scheduler steps.
func NewStepSummary() *StepSummary {
	return &StepSummary{batch: newRing(requestWindow), tokens: newRing(requestWindow), dur: newRing(requestWindow),
		lag: newRing(requestWindow), stops: map[string]int64{}}
}

// Reset forgets every step.
func (s *StepSummary) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps, s.compute, s.mem, s.preempt, s.queries, s.hit = 0, 0, 0, 0, 0, 0
	s.batch.reset()
	s.tokens.reset()
	s.dur.reset()
	s.lag.reset()
	s.stops = map[string]int64{}
}

// Observe records one scheduler step and how late the driver released it.
func (s *StepSummary) Observe(st *sched.Step, lag time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps++
	if st.Compute >= st.Memory {
		s.compute++
	} else {
		s.mem++
	}
	s.batch.push(float64(st.BatchSize))
	s.tokens.push(float64(st.ScheduledTokens))
	s.dur.push(st.Duration)
	s.lag.push(lag.Seconds())
	if st.Waiting > 0 || st.StopReason != sched.StopNone {
		s.stops[st.StopReason]++
	}
	s.preempt += int64(len(st.Preempted))
	s.queries += int64(st.PrefixQueries)
	s.hit += int64(st.PrefixHit)
}

// Snapshot is the steps so far, with the engine's current state and cache
// size beside them.
func (s *StepSummary) Snapshot(running, waiting int, kvUsage float64, numBlocks, blockSize int) *SchedulerSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &SchedulerSummary{
		Steps: s.steps, ComputeBound: s.compute, MemoryBound: s.mem,
		BatchSize: s.batch.stats(), ScheduledTokens: s.tokens.stats(), StepDuration: s.dur.stats(), StepLag: s.lag.stats(),
		AdmissionStops: map[string]int64{}, Preemptions: s.preempt, PrefixQueries: s.queries, PrefixHits: s.hit,
		Running: running, Waiting: waiting, KVUsage: kvUsage, NumBlocks: numBlocks, BlockSize: blockSize,
	}
	for k, v := range s.stops {
		out.AdmissionStops[k] = v
	}
	if s.queries > 0 {
		out.PrefixHitRate = float64(s.hit) / float64(s.queries)
	}
	return out
}
