package results

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sweep is a series of levels of load and the knees found in them.
type Sweep struct {
	SchemaVersion int         `json:"schema_version"`
	Label         string      `json:"label"`
	StartedAt     time.Time   `json:"started_at"`
	Config        Config      `json:"config"`
	Environment   Environment `json:"environment"`
	// Axis is "rate" (open loop: requests or calls per second) or
	// "concurrency" (closed loop).
	Axis     string  `json:"axis"`
	Workload string  `json:"workload"`
	SLO      SLO     `json:"slo"`
	Levels   []Level `json:"levels"`
	Knees    Knees   `json:"knees"`
	// ClassKnees are a mix's classes' own knees, and DegradedFirst the
	// class that missed its SLO at the lightest load (several, comma-
	// separated, when they missed at the same one).
	ClassKnees    []ClassKnee `json:"class_knees,omitempty"`
	DegradedFirst string      `json:"degraded_first,omitempty"`
	// Interference, for a sweep that varied one class of a mix, is how
	// the others moved with it.
	Interference *Interference `json:"interference,omitempty"`
	// HealthPolicy says what an unhealthy level (client-limited or
	// host-starved) does to the knees: HealthExclude (the default, also
	// ""), HealthWarn or HealthIgnore.
	HealthPolicy string `json:"health_policy,omitempty"`
	Interrupted  bool   `json:"interrupted,omitempty"`
	// Prediction is set on a sweep computed by knee predict: what it was
	// computed on.
	Prediction *Prediction `json:"prediction,omitempty"`
	// Repeats is set on a sweep whose levels were measured several times
	// (--repeat): how its knees fell in each repeat.
	Repeats *SweepRepeats `json:"repeats,omitempty"`
}

// Prediction says what a predicted sweep was computed on: the simulated
// model and the whole models file whose numbers shaped its timing.
type Prediction struct {
	Model      string `json:"model"`
	Preset     string `json:"preset,omitempty"`
	ModelsYAML string `json:"models_yml"`
	// Replicas of the model served every level behind a router with the
	// Routing policy (absent: one replica).
	Replicas int    `json:"replicas,omitempty"`
	Routing  string `json:"routing,omitempty"`
	// KVBlocks of KVBlockTokens tokens are one replica's KV cache; they
	// hold KVSequences sequences of the workload's mean size,
	// KVSequenceTokens (prompt and answer).
	KVBlocks         int     `json:"kv_blocks,omitempty"`
	KVBlockTokens    int     `json:"kv_block_tokens,omitempty"`
	KVSequences      int     `json:"kv_sequences,omitempty"`
	KVSequenceTokens float64 `json:"kv_sequence_tokens,omitempty"`
	// Fit, when the model was calibrated, states how well its tuning
	// fitted the measurement it was calibrated to.
	Fit string `json:"fit,omitempty"`
	// Scheduling says the engine rules the prediction ran on: the queue's
	// order, the step's token budget and what a long prefill may take of
	// it.
	Scheduling string `json:"scheduling,omitempty"`
}

// Level is one load level of a sweep.
type Level struct {
	Load  float64 `json:"load"`
	Run   *Run    `json:"run,omitempty"`
	Error string  `json:"error,omitempty"`
	// Verdict is what the sweep's SLO says of the level (FindKnees sets
	// it), for every reader to take rather than decide again.
	Verdict *Verdict `json:"verdict,omitempty"`
}

// Knees holds the knees of a sweep; a nil knee was not found.
type Knees struct {
	SLO        *Knee `json:"slo_knee"`
	Curvature  *Knee `json:"curvature_knee"`
	Saturation *Knee `json:"saturation"`
	// CurveShape says why there is or is not a curvature knee: "knee",
	// "flat", "no bend" or "fewer than three levels".
	CurveShape string `json:"curve_shape,omitempty"`
	// SLONotReached marks an SLO knee that is only the highest level
	// judged: every level judged met the SLO, so the limit lies above the
	// levels measured and the knee is no provisioning limit.
	SLONotReached bool            `json:"slo_not_reached,omitempty"`
	Excluded      []ExcludedLevel `json:"excluded,omitempty"`
	// JudgedUnhealthy are unhealthy levels the knees used anyway, as
	// --health-policy warn asks, and why they were unhealthy.
	JudgedUnhealthy []ExcludedLevel `json:"judged_unhealthy,omitempty"`
}

// Knee is a level singled out by a knee function.
type Knee struct {
	Load  float64 `json:"load"`
	Index int     `json:"index"`
	// LatencyMs is the SLO metric there; nil when the level measured no
	// latency (every request failed).
	LatencyMs *float64 `json:"latency_ms"`
}

// ExcludedLevel is a level left out of the knees, and why.
type ExcludedLevel struct {
	Load   float64 `json:"load"`
	Reason string  `json:"reason"`
	// Saturation says the level still counts toward saturation: its
	// latencies are not believed, but its completions are real.
	Saturation bool `json:"counts_for_saturation,omitempty"`
}

// SummaryOf picks a named latency's distribution of a run's stats (the
// metric table's).
func (s Stats) SummaryOf(metric string) (Summary, bool) {
	m, ok := MetricNamed(metric)
	if !ok || !m.Latency() {
		return Summary{}, false
	}
	return *m.Stat(&s), true
}

// At returns the summary's value at percentile p (50, 90, 95, 99 or 100).
func (s Summary) At(p float64) float64 {
	switch p {
	case 50:
		return s.P50
	case 90:
		return s.P90
	case 95:
		return s.P95
	case 99:
		return s.P99
	case 100:
		return s.Max
	}
	return math.NaN()
}

// Throughput returns the level's achieved throughput and what a server
// keeping up would have delivered (zero for closed loop).
func (l Level) throughput(axis string) (achieved, expected float64) {
	r := l.Run
	// A server keeping up delivers the schedule actually drawn (the offered
	// rate), which differs from the target by sampling noise.
	offered := r.Arrivals.OfferedRate
	if offered <= 0 {
		offered = l.Load
	}
	if c := r.Calls; c != nil {
		if axis != "rate" {
			return c.TurnsPerS, 0
		}
		// A server keeping up answers every measured turn of every offered
		// call: turns per second against turns offered per second.
		if c.TurnsOfferedPerS > 0 && r.Arrivals.CompletionRate > 0 {
			return r.Arrivals.CompletionRate, c.TurnsOfferedPerS
		}
		if offeredCalls := c.Started + c.Shed; offeredCalls > 0 {
			return offered * float64(c.Completed) / float64(offeredCalls), offered
		}
		return c.TurnsPerS, 0
	}
	achieved = r.Throughput.RequestsPerS
	if axis == "rate" {
		expected = offered
		// Against an open-loop offer, what counts is whether completions
		// kept pace with arrivals over the span they cover.
		if r.Arrivals.CompletionRate > 0 {
			achieved = r.Arrivals.CompletionRate
		}
	}
	return achieved, expected
}

// Health policies (Sweep.HealthPolicy).
const (
	HealthExclude = "exclude"
	HealthWarn    = "warn"
	HealthIgnore  = "ignore"
)

// HealthPolicies lists the health policies.
var HealthPolicies = []string{HealthExclude, HealthWarn, HealthIgnore}

// missingReason says what a level's missing requests do to it.
func missingReason(r *Run) string {
	cut, unsent := r.Missing()
	var what []string
	if cut > 0 {
		what = append(what, fmt.Sprintf("%d cut before they finished", cut))
	}
	if unsent > 0 {
		what = append(what, fmt.Sprintf("%d never sent for want of a --max-concurrency slot", unsent))
	}
	return fmt.Sprintf("%.1f%% of its requests are missing from its percentiles (%s): the slowest are gone, so its latencies read low "+
		"and it cannot be said to meet the SLO; it still counts toward saturation", 100*r.MissingShare(), joinReasons(what))
}

func joinReasons(r []string) string {
	var b bytes.Buffer
	for i, x := range r {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// ReadSweep reads a sweep written by knee sweep.
func ReadSweep(path string) (*Sweep, error) {
	b, err := ReadInput(context.Background(), path, MaxResultBytes)
	if err != nil {
		return nil, err
	}
	return DecodeSweep(path, b)
}

// DecodeSweep is ReadSweep of a file already read (see ReadInput).
func DecodeSweep(path string, b []byte) (*Sweep, error) {
	var s Sweep
	if err := decodeVersioned(path, b, &s); err != nil {
		return nil, err
	}
	if s.Axis == "" {
		return nil, fmt.Errorf("%s: not a sweep result (no levels axis); is it a knee run file?", path)
	}
	if err := s.checkKnees(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, l := range s.Levels {
		if l.Run == nil {
			continue
		}
		if err := plausibleCounts(l.Run); err != nil {
			return nil, fmt.Errorf("%s: level %d: %w", path, i, err)
		}
	}
	return &s, nil
}

// checkKnees checks that every knee names one of the sweep's levels.
func (s *Sweep) checkKnees() error {
	for _, k := range []struct {
		name string
		k    *Knee
	}{{"slo_knee", s.Knees.SLO}, {"curvature_knee", s.Knees.Curvature}, {"saturation", s.Knees.Saturation}} {
		if k.k == nil {
			continue
		}
		if k.k.Index < 0 || k.k.Index >= len(s.Levels) || s.Levels[k.k.Index].Load != k.k.Load {
			return fmt.Errorf("its %s (load %g, level %d) is not one of its %d levels", k.name, k.k.Load, k.k.Index, len(s.Levels))
		}
	}
	return nil
}

// CSVHeader lists the columns of a sweep's CSV file.
var CSVHeader = []string{
	"load", "axis", "achieved_rate", "ttft_p50_ms", "ttft_p95_ms", "ttft_p99_ms", "ttft_sched_p50_ms", "ttft_sched_p95_ms", "ttft_sched_p99_ms",
	"itl_p50_ms", "itl_p95_ms", "itl_p99_ms", "tpot_p50_ms", "e2e_p50_ms", "e2e_p99_ms",
	"throughput_per_s", "output_tokens_per_s", "cache_hit_rate", "achieved_concurrency", "error_rate", "client_health",
	"requests", "goodput_share", "goodput_per_s", "target_rate", "offered_rate",
	"server_ttft_p50_ms", "server_ttft_p99_ms", "server_itl_p50_ms", "server_itl_p99_ms", "server_tpot_p50_ms",
	"server_e2e_p50_ms", "server_e2e_p99_ms", "server_output_tokens_per_s", "server_lag_p99_ms",
	"server_ttft_mean_ms", "server_itl_mean_ms", "server_e2e_mean_ms", "error",
	"completion_rate_per_s", "sent", "ok", "failed", "cut", "unsent", "missing_share", "warnings",
	"ttfat_p50_ms", "ttfat_p95_ms", "ttfat_p99_ms", "reasoning_tokens_mean", "answer_tokens_mean", "no_answer_share",
	"class", "gpu_energy_j", "gpu_power_mean_w", "joules_per_output_token", "output_tokens_per_joule",
	"repeats", "ttft_sched_p50_ci_ms", "ttft_sched_p95_ci_ms", "ttft_sched_p99_ci_ms", "itl_p50_ci_ms", "e2e_sched_p95_ci_ms", "throughput_ci_per_s",
}

// csvIntervals are the columns holding a repeated level's 95% interval
// half-widths (Repeats), by figure.
var csvIntervals = map[string]string{
	"ttft_sched_p50_ci_ms": "ttft_sched.p50", "ttft_sched_p95_ci_ms": "ttft_sched.p95", "ttft_sched_p99_ci_ms": "ttft_sched.p99",
	"itl_p50_ci_ms": "itl.p50", "e2e_sched_p95_ci_ms": "e2e_sched.p95", "throughput_ci_per_s": "throughput",
}

// CSV renders one row per level, in CSVHeader's columns. Values a level
// does not have are empty, never NaN.
func (s *Sweep) CSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(CSVHeader); err != nil {
		return nil, err
	}
	f := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	for _, l := range s.Levels {
		col := map[string]string{"load": f(l.Load), "axis": s.Axis}
		if l.Run == nil {
			col["error"] = l.Error
		} else {
			s.csvColumns(l, col, f)
		}
		rows := []map[string]string{col}
		if l.Run != nil {
			// A mix's classes follow their level, one row each, named in
			// the class column (empty on the whole level's row).
			for _, name := range slices.Sorted(maps.Keys(l.Run.Classes)) {
				cc := map[string]string{"load": f(l.Load), "axis": s.Axis, "class": name}
				s.csvColumns(Level{Load: l.Load, Run: l.Run.Classes[name]}, cc, f)
				rows = append(rows, cc)
			}
		}
		for _, col := range rows {
			row := make([]string, len(CSVHeader))
			for i, name := range CSVHeader {
				row[i] = col[name]
			}
			if err := w.Write(row); err != nil {
				return nil, err
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// csvColumns fills a measured level's columns.
func (s *Sweep) csvColumns(l Level, col map[string]string, f func(float64) string) {
	r := l.Run
	csvEnergyAndRepeats(r, col, f)
	csvFigures(r, col, f)
	csvServer(r.Server, col, f)
}

// csvEnergyAndRepeats fills a repeated level's intervals and the GPUs'
// energy.
func csvEnergyAndRepeats(r *Run, col map[string]string, f func(float64) string) {
	if rp := r.Repeats; rp != nil {
		col["repeats"] = strconv.Itoa(rp.Count)
		for column, figure := range csvIntervals {
			if iv, ok := rp.Intervals[figure]; ok {
				col[column] = f(iv.HalfWidth)
			}
		}
	}
	if g := r.GPU; g != nil && len(g.GPUs) > 0 {
		col["gpu_energy_j"], col["gpu_power_mean_w"] = f(g.EnergyJ), f(g.PowerMeanW)
		col["joules_per_output_token"], col["output_tokens_per_joule"] = f(g.JoulesPerOutputToken), f(g.OutputTokensPerJoule)
	}
}

// csvFigures fills the client's figures: rates, latencies, counts, the
// cache, reasoning, concurrency and goodput.
func csvFigures(r *Run, col map[string]string, f func(float64) string) {
	st := r.Stats
	// Throughput is completions per second in the window, as the terminal
	// and the plots say; the shifted-window estimate that saturation is
	// judged by has its own column.
	tput := r.Throughput.RequestsPerS
	if r.Calls != nil {
		tput = r.Calls.TurnsPerS
	}
	q := func(sum Summary, v float64) string {
		if sum.Count == 0 {
			return ""
		}
		return f(v)
	}
	for k, v := range map[string]string{
		"achieved_rate": f(r.Arrivals.AchievedRate), "target_rate": f(r.Arrivals.TargetRate), "offered_rate": f(r.Arrivals.OfferedRate),
		"ttft_p50_ms": q(st.TTFT, st.TTFT.P50), "ttft_p95_ms": q(st.TTFT, st.TTFT.P95), "ttft_p99_ms": q(st.TTFT, st.TTFT.P99),
		"ttft_sched_p50_ms": q(st.TTFTSched, st.TTFTSched.P50), "ttft_sched_p95_ms": q(st.TTFTSched, st.TTFTSched.P95), "ttft_sched_p99_ms": q(st.TTFTSched, st.TTFTSched.P99),
		"itl_p50_ms": q(st.ITL, st.ITL.P50), "itl_p95_ms": q(st.ITL, st.ITL.P95), "itl_p99_ms": q(st.ITL, st.ITL.P99),
		"tpot_p50_ms": q(st.TPOT, st.TPOT.P50), "e2e_p50_ms": q(st.E2E, st.E2E.P50), "e2e_p99_ms": q(st.E2E, st.E2E.P99),
		"throughput_per_s": f(tput), "output_tokens_per_s": f(r.Throughput.OutputTokensPerS),
		"error_rate": f(r.Requests.ErrorRate()), "client_health": r.Health.Verdict,
		"requests": strconv.FormatInt(r.Requests.OK+r.Requests.Failed, 10),
		"sent":     strconv.FormatInt(r.Requests.Sent, 10), "ok": strconv.FormatInt(r.Requests.OK, 10),
		"failed": strconv.FormatInt(r.Requests.Failed, 10), "cut": strconv.FormatInt(r.Requests.Interrupted, 10),
		"unsent": strconv.FormatInt(r.Arrivals.Unsent, 10), "missing_share": f(r.MissingShare()),
		"warnings": strings.Join(r.Warnings, " | "),
	} {
		col[k] = v
	}
	if r.Cache != nil && r.Cache.Reported {
		col["cache_hit_rate"] = f(r.Cache.HitRate)
	}
	col["ttfat_p50_ms"], col["ttfat_p95_ms"], col["ttfat_p99_ms"] = q(st.TTFAT, st.TTFAT.P50), q(st.TTFAT, st.TTFAT.P95), q(st.TTFAT, st.TTFAT.P99)
	if rs := r.Reasoning; rs != nil {
		col["reasoning_tokens_mean"], col["answer_tokens_mean"] = f(rs.ReasoningPerRequest.Mean), f(rs.AnswerPerRequest.Mean)
		col["no_answer_share"] = f(rs.NoAnswerShare())
	}
	conc := r.Arrivals.AchievedConcurrency
	if r.Calls != nil {
		conc = r.Calls.AchievedConcurrency
	}
	col["achieved_concurrency"] = f(conc)
	if cr := r.Arrivals.CompletionRate; cr > 0 {
		col["completion_rate_per_s"] = f(cr)
	}
	if g := r.Goodput; g != nil {
		col["goodput_share"], col["goodput_per_s"] = f(g.Share), f(g.RequestsPerS)
	}
}

// csvServer fills the server view's measured figures and its lag.
func csvServer(sv *Server, col map[string]string, f func(float64) string) {
	if sv == nil {
		return
	}
	// A percentile the server only has as a histogram bucket is left
	// empty: its interpolated point is no measurement.
	for _, fig := range sv.Figures {
		if fig.Server == nil || fig.Estimate {
			continue
		}
		if name, ok := serverColumns[fig.Name]; ok {
			col[name] = f(*fig.Server)
		}
	}
	if sv.Lag != nil {
		col["server_lag_p99_ms"] = f(sv.Lag.P99)
	}
}

// serverColumns maps comparison rows to CSV columns.
var serverColumns = map[string]string{
	"TTFT p50": "server_ttft_p50_ms", "TTFT p99": "server_ttft_p99_ms", "ITL p50": "server_itl_p50_ms", "ITL p99": "server_itl_p99_ms",
	"TPOT p50": "server_tpot_p50_ms", "E2E p50": "server_e2e_p50_ms", "E2E p99": "server_e2e_p99_ms",
	"output tok/s": "server_output_tokens_per_s", "TTFT mean": "server_ttft_mean_ms", "ITL mean": "server_itl_mean_ms", "E2E mean": "server_e2e_mean_ms",
}

// EveryRequestFailed reports whether the sweep measured no success at all.
func (s *Sweep) EveryRequestFailed() bool {
	failed := false
	for _, l := range s.Levels {
		if l.Run == nil {
			failed = true
			continue
		}
		if l.Run.Requests.OK > 0 {
			return false
		}
		failed = failed || l.Run.Requests.Failed > 0
	}
	return failed
}
