// Package results is the data model of a knee run and a sweep: what was
// measured, the configuration and environment it was measured in, the files
// it is kept in, and the knee detection that reads a sweep.
package results

import (
	"fmt"
	"math"
	"time"
)

// SchemaVersion is the version of the JSON files written by this package.
// Readers refuse files of any other version rather than misreading them.
const SchemaVersion = 1

// Run is the complete result of one measured run (one level of a sweep).
type Run struct {
	SchemaVersion int         `json:"schema_version"`
	Config        Config      `json:"config"`
	Environment   Environment `json:"environment"`
	StartedAt     time.Time   `json:"started_at"`
	// WindowStartedAt is the wall instant the measured window began.
	WindowStartedAt time.Time `json:"window_started_at,omitempty"`
	// Shard is set on one shard's part of a split load.
	Shard         *Shard       `json:"shard,omitempty"`
	WindowSeconds float64      `json:"window_s"`
	Stats         Stats        `json:"stats"`
	Requests      Requests     `json:"requests"`
	Tokens        Tokens       `json:"tokens"`
	Throughput    Throughput   `json:"throughput"`
	Arrivals      Arrivals     `json:"arrivals"`
	Health        Health       `json:"health"`
	Connections   *Connections `json:"connections,omitempty"`
	Cache         *Cache       `json:"cache,omitempty"`
	Goodput       *Goodput     `json:"goodput,omitempty"`
	Calls         *Calls       `json:"calls,omitempty"`
	ByTurn        []TurnStats  `json:"by_turn,omitempty"`
	Server        *Server      `json:"server,omitempty"`
	// Phases splits a disaggregated model's time to first token by phase,
	// as the simulator says it (predicted, or knee sim's own account).
	Phases *Phases `json:"phases,omitempty"`
	// Pools is each pool's own account of a disaggregated deployment's
	// window (--server-metrics-url prefill=URL,decode=URL), by role.
	Pools map[string]*Server `json:"pools,omitempty"`
	// SliceS and Slices are the window cut into time slices (--slice).
	SliceS float64 `json:"slice_s,omitempty"`
	Slices []Slice `json:"slices,omitempty"`
	// GPU is the GPUs' own account of the window (--gpu-metrics-url):
	// power, energy and energy per token.
	GPU *GPUFigures `json:"gpu,omitempty"`
	// ServerTimings is what the server said of each request in the
	// response itself (llama.cpp's timings object), over measured
	// successful requests.
	ServerTimings *ServerTimings `json:"server_timings,omitempty"`
	Histograms    Histograms     `json:"histograms,omitempty"`
	// Reasoning is set when requests reasoned before answering.
	Reasoning *Reasoning `json:"reasoning,omitempty"`
	// ToolCalls is set when answers called tools.
	ToolCalls *ToolCalls `json:"tool_calls,omitempty"`
	// Classes, for a mix, are each class's own summary, keyed by its
	// name, in the shape of a run's (their Config left empty).
	Classes map[string]*Run `json:"classes,omitempty"`
	// MixClass, on a class's summary, says what the class is and
	// whether it met its own SLO.
	MixClass *MixClass `json:"mix_class,omitempty"`
	// Fairness is Jain's index over the classes' goodput (JainFairness).
	Fairness *float64 `json:"fairness_jain,omitempty"`
	// Images is set when requests sent images.
	Images      *Images  `json:"images,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
	// MergedShards is set on a run merged from that many shards' files.
	MergedShards int `json:"merged_shards,omitempty"`
	// Repeats is set on a level measured several times (--repeat): the
	// run is their pooled figures, and Repeats each one's and the
	// intervals across them.
	Repeats *Repeats `json:"repeats,omitempty"`
}

// Shard says which part of a split load a run sent: arrivals, workers or
// calls k with k mod Count = Index. StartAt is the instant every shard was
// to start its window, and StartLatenessMs how late this one did.
type Shard struct {
	Index           int        `json:"index"`
	Count           int        `json:"count"`
	StartAt         *time.Time `json:"start_at,omitempty"`
	StartLatenessMs float64    `json:"start_lateness_ms,omitempty"`
}

// Redacted is what secrets are replaced with in every file knee writes.
const Redacted = "[redacted]"

// Environment describes where the run was measured.
type Environment struct {
	KneeVersion string `json:"knee_version"`
	GoVersion   string `json:"go_version"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	CPUs        int    `json:"cpus"`
	Host        string `json:"host"`
}

// Summary holds the usual statistics of one distribution, in milliseconds
// for latencies (tokens for token counts).
type Summary struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	// Stddev is the population standard deviation.
	Stddev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// Stats holds every latency distribution of a run, in milliseconds.
type Stats struct {
	TTFT      Summary `json:"ttft"`
	TTFTSched Summary `json:"ttft_sched"`
	ITL       Summary `json:"itl"`
	TPOT      Summary `json:"tpot"`
	E2E       Summary `json:"e2e"`
	E2ESched  Summary `json:"e2e_sched"`
	QueueWait Summary `json:"queue_wait"`
	// TTFAT is the time to the first answer token, not reasoning (the
	// same as TTFT for a model that does not reason); TTFATSched from
	// the scheduled arrival.
	TTFAT      Summary `json:"ttfat,omitzero"`
	TTFATSched Summary `json:"ttfat_sched,omitzero"`
}

// Requests counts outcomes. Failures are grouped by class; interrupted
// requests (cut short by Ctrl-C) are neither successes nor failures.
type Requests struct {
	Sent        int64            `json:"sent"`
	OK          int64            `json:"ok"`
	Failed      int64            `json:"failed"`
	Interrupted int64            `json:"interrupted,omitempty"`
	Errors      map[string]int64 `json:"errors"`
	// ErrorMessages are the server's words for each error class: the
	// first message it gave (what a refusal says, not only its status).
	ErrorMessages map[string]string `json:"error_messages,omitempty"`
	// Warmup is how many unmeasured warm-up requests were sent before the
	// measured window.
	Warmup int64 `json:"warmup"`
	// Ramp counts the requests --ramp-up sent before the window, none of
	// them measured, and RampRunning those still running as it started
	// (the server counts them when they end, in the window).
	Ramp        int64 `json:"ramp,omitempty"`
	RampRunning int64 `json:"ramp_running,omitempty"`
	// FirstAttempt counts outcomes of first attempts when retries are on.
	FirstAttempt *Attempts `json:"first_attempt,omitempty"`
	// PartialTokens is how many tokens failed streams delivered before
	// they broke.
	PartialTokens int64 `json:"partial_tokens,omitempty"`
}

// Attempts counts first-attempt outcomes, so that retries never hide errors.
type Attempts struct {
	OK      int64            `json:"ok"`
	Failed  int64            `json:"failed"`
	Errors  map[string]int64 `json:"errors"`
	Retries int64            `json:"retries"`
}

// MaxMissingShare is the largest share of a level's requests that may be
// missing from its percentiles (cut by the drain timeout, or never sent for
// want of a --max-concurrency slot) before the level's latencies are no
// longer believed: the requests missing are the slowest, so its
// percentiles read low.
const MaxMissingShare = 0.02

// Missing counts a run's measured requests that are in none of its
// latency percentiles: cut before they finished (by the drain timeout or a
// signal), and, unsent, arrivals due in the window that never got a slot.
func (r *Run) Missing() (cut, unsent int64) {
	return r.Requests.Interrupted, r.Arrivals.Unsent
}

// MissingShare is the share of the window's requests that Missing counts,
// of every request it was due to measure.
func (r *Run) MissingShare() float64 {
	cut, unsent := r.Missing()
	all := r.Requests.OK + r.Requests.Failed + cut + unsent
	if all == 0 {
		return 0
	}
	return float64(cut+unsent) / float64(all)
}

// ErrorRate is the failed share of finished (non-interrupted) requests.
func (r Requests) ErrorRate() float64 {
	n := r.OK + r.Failed
	if n == 0 {
		return 0
	}
	return float64(r.Failed) / float64(n)
}

// Tokens describes request sizes of successful measured requests.
type Tokens struct {
	InputTotal    int64   `json:"input_total"`
	OutputTotal   int64   `json:"output_total"`
	CachedTotal   int64   `json:"cached_total"`
	Input         Summary `json:"input_per_request"`
	Output        Summary `json:"output_per_request"`
	UsageReported bool    `json:"usage_reported"`
	// CachedReported says whether the server ever sent
	// usage.prompt_tokens_details.cached_tokens.
	CachedReported bool `json:"cached_reported"`
	// MultiTokenChunks counts responses that packed several tokens into
	// one chunk, which makes ITL a per-chunk rather than per-token figure.
	MultiTokenChunks int64 `json:"multi_token_chunks,omitempty"`
}

// Throughput is measured over the window from the first measured scheduled
// arrival to the last measured completion.
type Throughput struct {
	RequestsPerS     float64 `json:"requests_per_s"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	TotalTokensPerS  float64 `json:"total_tokens_per_s"`
	// InputsPerS is a pooling endpoint's inputs (embeddings) a second.
	InputsPerS float64 `json:"inputs_per_s,omitempty"`
}

// Arrivals compares the load asked for, the schedule drawn and what was sent.
type Arrivals struct {
	TargetRate   float64 `json:"target_rate"`
	OfferedRate  float64 `json:"offered_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	Waited       int64   `json:"waited"`
	// Unsent counts arrivals due inside the window that were still waiting
	// for a concurrency slot when it closed.
	Unsent    int64 `json:"unsent,omitempty"`
	LateSends int64 `json:"late_sends"`
	// SendLatenessP50Ms and SendLatenessP99Ms are the dispatcher's own
	// lateness against the schedule, excluding waits for a concurrency
	// slot, at microsecond resolution.
	SendLatenessP50Ms float64 `json:"send_lateness_p50_ms"`
	SendLatenessP99Ms float64 `json:"send_lateness_p99_ms"`
	// AchievedConcurrency is the mean number of requests in flight.
	AchievedConcurrency float64 `json:"achieved_concurrency"`
	// AgeFirstThirdMs and AgeLastThirdMs are the median times from
	// scheduled arrival to completion of the requests scheduled in the
	// first and the last third of an open loop's window: a queue that
	// grows through the window shows as the second far above the first
	// (see QueueGrowing). Absent with too few requests.
	AgeFirstThirdMs float64 `json:"age_first_third_ms,omitempty"`
	AgeLastThirdMs  float64 `json:"age_last_third_ms,omitempty"`
	// CompletionRate is the offered rate times the share of the window's
	// arrivals matched by a successful completion inside the window shifted
	// by the typical age at completion (see docs/sweeps.md): a server that
	// keeps up matches the offered rate however long its requests are next
	// to the window. Open loop only.
	CompletionRate float64 `json:"completion_rate,omitempty"`
	// WindowArrivals counts the arrivals (for calls, measured turns)
	// offered in the window, sent or not: what CompletionRate is a share of.
	WindowArrivals int64 `json:"window_arrivals,omitempty"`
}

// Connections says what happened to the client's connections over the
// whole run (warm-up included).
type Connections struct {
	// Opened is how many connections knee dialled.
	Opened int64 `json:"opened"`
	// StaleClosed is how many pooled connections were found closed by the
	// server before a request was sent on them (nothing was lost).
	StaleClosed int64 `json:"stale_closed"`
	// Resent is how many requests went out a second time because the
	// server closed their reused connection without answering a byte.
	// They are not errors.
	Resent int64 `json:"resent"`
}

// Health is the client's account of itself.
type Health struct {
	TimerLagP50Ms float64 `json:"timer_lag_p50_ms"`
	TimerLagP99Ms float64 `json:"timer_lag_p99_ms"`
	TimerLagMaxMs float64 `json:"timer_lag_max_ms"`
	CPUPercent    float64 `json:"cpu_percent"`
	CPUSeconds    float64 `json:"cpu_s"`
	// CPUPerTokenUs is client CPU per output token received, in µs.
	CPUPerTokenUs float64  `json:"cpu_per_token_us,omitempty"`
	GCPauseMs     float64  `json:"gc_pause_total_ms"`
	NumGC         uint32   `json:"num_gc"`
	Verdict       string   `json:"verdict"`
	Reasons       []string `json:"reasons,omitempty"`
}

// Healthy reports whether the client did not limit the figures (a noisy
// client still counts: its jitter is reported, not disqualifying).
func (h Health) Healthy() bool {
	return h.Verdict != VerdictClientLimited && h.Verdict != VerdictHostStarved
}

// Health verdicts.
const (
	VerdictHealthy = "healthy"
	// VerdictVirtual marks a predicted run: no client ran in wall time.
	VerdictVirtual       = "virtual"
	VerdictNoisy         = "noisy"
	VerdictClientLimited = "client-limited"
	// VerdictHostStarved marks a run whose client was late through no
	// fault of its own: the machine (or its hypervisor) starved it, and
	// the server too when it shares the box.
	VerdictHostStarved = "host-starved"
)

// ServerLateMs is the server's own timer lateness p99 (knee sim's lag)
// past which a late client is taken to share a starved host with it.
const ServerLateMs = 20

// JudgeHost turns a client-limited verdict into host-starved when the
// server's own timers were late as well: both stalled together, which no
// client limit explains. It is for after the server view is filled.
func (r *Run) JudgeHost() {
	if r.Health.Verdict != VerdictClientLimited || r.Server == nil || r.Server.Lag == nil || r.Server.Lag.P99 <= ServerLateMs {
		return
	}
	r.Health.Verdict = VerdictHostStarved
	r.Health.Reasons = append(r.Health.Reasons, fmt.Sprintf(
		"the host was starved, not the client: the server's own timers were late too (p99 %.1f ms), so both stalled together", r.Server.Lag.P99))
}

// ServerTimings summarises per-response server timings, in ms: the time
// the server spent on the prompt (its prefill, without any wait for a
// slot) and its generation time per token after the first.
type ServerTimings struct {
	Requests int64   `json:"requests"`
	PromptMs Summary `json:"prompt_ms"`
	TPOT     Summary `json:"tpot_ms"`
}

// Goodput counts the requests that met every per-request bound (vLLM's
// goodput): Share of the finished ones (failures are never good), and
// RequestsPerS over the window.
type Goodput struct {
	// Bounds are the bounds in ms, by metric (ttft, ttft_sched, tpot,
	// e2e, e2e_sched).
	Bounds       map[string]float64 `json:"bounds_ms"`
	Good         int64              `json:"good"`
	Finished     int64              `json:"finished"`
	Share        float64            `json:"share"`
	RequestsPerS float64            `json:"requests_per_s"`
}

// Cache describes prefix-cache reuse over measured requests (or turns).
type Cache struct {
	// HitRate is the share of prompt tokens the server said it cached.
	HitRate   float64 `json:"cache_hit_rate"`
	ColdShare float64 `json:"cold_turn_share"`
	Reported  bool    `json:"reported"`
	// Expected is the share of prompt tokens that earlier requests of the
	// run had already sent as the same prefix: the hit a cache that kept
	// everything would give (0 for distinct prompts).
	Expected *float64 `json:"expected_hit_rate,omitempty"`
	// ColdTurns of Turns measured turns found their prefix cold (the call
	// workload), so shards' shares can be pooled.
	ColdTurns int64 `json:"cold_turns,omitempty"`
	Turns     int64 `json:"turns,omitempty"`
}

// Calls describes the call-level view of the voice workload.
type Calls struct {
	Started   int64 `json:"started"`
	Completed int64 `json:"completed"`
	Shed      int64 `json:"shed"`
	// Failed counts the calls a failed turn ended, and WarmupFailed those
	// whose failed turn was the unmeasured warm-up turn.
	Failed       int64   `json:"failed"`
	WarmupFailed int64   `json:"warmup_failed,omitempty"`
	TurnsPerS    float64 `json:"turns_per_s"`
	// TurnsOfferedPerS is the measured turns a server keeping up would
	// answer per second: offered calls per second × measured turns per call.
	TurnsOfferedPerS    float64 `json:"turns_offered_per_s,omitempty"`
	AchievedConcurrency float64 `json:"achieved_concurrency"`
	// LittlesLaw is the calls in progress Little's law expects on average
	// over the arrivals' span, which starts empty: λw(1 − w/2a).
	LittlesLaw      float64 `json:"littles_law_concurrency"`
	MeanCallSeconds float64 `json:"mean_call_s"`
}

// TurnStats breaks latencies down by turn index of a call.
type TurnStats struct {
	Turn int     `json:"turn"`
	TTFT Summary `json:"ttft"`
	ITL  Summary `json:"itl"`
}

// Histograms holds encoded HDR histograms (V2 compressed, base64) of the
// main distributions, in microseconds, so later tools can merge them or take
// other percentiles.
type Histograms map[string]string

// InputSizeWarnings says when the measured prompts miss the size asked by
// more than 3% (and more than 2 tokens, for short prompts), or when the
// server never counted them.
func InputSizeWarnings(want int, tk Tokens) []string {
	if !tk.UsageReported || tk.Input.Count == 0 {
		return []string{fmt.Sprintf("--input-tokens %d could not be checked: the server reported no prompt_tokens", want)}
	}
	off := math.Abs(tk.Input.Mean - float64(want))
	if miss := off / float64(want); miss > 0.03 && off > 2 {
		return []string{fmt.Sprintf("prompts averaged %.1f server tokens against --input-tokens %d (%.1f%% off)", tk.Input.Mean, want, 100*miss)}
	}
	return nil
}

// MixClass is what a mix's class was, on its summary.
type MixClass struct {
	Share    float64 `json:"share"`
	Model    string  `json:"model,omitempty"`
	Priority *int    `json:"priority,omitempty"`
	// SLO is the class's own (none: "") and Missed the bounds its
	// summary missed (MetSLO false), or nil when it met them all.
	SLO    string   `json:"slo,omitempty"`
	MetSLO *bool    `json:"met_slo,omitempty"`
	Missed []string `json:"missed,omitempty"`
	// Varied marks the class a sweep's --vary raised.
	Varied bool `json:"varied,omitempty"`
}

// JudgeClass sets m's verdict on r against its SLO's bounds.
func (m *MixClass) JudgeClass(r *Run, bounds []Bound) {
	m.Missed = nil
	if len(bounds) == 0 || r.Requests.OK+r.Requests.Failed == 0 {
		// No SLO, or no request of the class finished to judge it by
		// (a light load dealt it none).
		m.MetSLO = nil
		return
	}
	met := true
	for _, b := range bounds {
		v, ok := b.Value(r)
		if !ok || v > b.Ms {
			met = false
			got := "no value"
			if ok {
				got = fmt.Sprintf("%.1f ms", v)
			}
			m.Missed = append(m.Missed, fmt.Sprintf("%s: %s", b, got))
		}
	}
	m.MetSLO = &met
}
