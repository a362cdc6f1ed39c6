package results

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
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
	// HealthPolicy says what an unhealthy level (client-limited or
	// host-starved) does to the knees: HealthExclude (the default, also
	// ""), HealthWarn or HealthIgnore.
	HealthPolicy string `json:"health_policy,omitempty"`
	Interrupted  bool   `json:"interrupted,omitempty"`
	// Prediction is set on a sweep computed by knee predict: what it was
	// computed on.
	Prediction *Prediction `json:"prediction,omitempty"`
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
}

// SLO is the objective the SLO knee is found against.
type SLO struct {
	// Metric is one of the stats names (ttft_sched, ttft, e2e, ...), or
	// "goodput": then a level meets the SLO when at least MinGoodPercent of
	// its finished requests met every --goodput bound.
	Metric         string  `json:"metric"`
	Percentile     float64 `json:"percentile"`
	ThresholdMs    float64 `json:"threshold_ms"`
	MaxErrorRate   float64 `json:"max_error_rate"`
	MinGoodPercent float64 `json:"min_good_percent,omitempty"`
}

// Value is the SLO metric of a run: the latency at the SLO percentile in
// ms, or for goodput the percentage of finished requests that were not
// good, so that for both lower is better and Threshold is the bound. ok is
// false when the run measured none.
func (o SLO) Value(r *Run) (float64, bool) {
	if o.Metric == "goodput" {
		if r.Goodput == nil || r.Goodput.Finished == 0 {
			return 0, false
		}
		return 100 * (1 - r.Goodput.Share), true
	}
	sum, ok := r.Stats.SummaryOf(o.Metric)
	if !ok || sum.Count == 0 {
		return 0, false
	}
	return sum.At(o.Percentile), true
}

// Threshold is the bound Value must not exceed.
func (o SLO) Threshold() float64 {
	if o.Metric == "goodput" {
		return 100 - o.MinGoodPercent
	}
	return o.ThresholdMs
}

// Level is one load level of a sweep.
type Level struct {
	Load  float64 `json:"load"`
	Run   *Run    `json:"run,omitempty"`
	Error string  `json:"error,omitempty"`
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

// SummaryOf picks a named distribution of a run's stats.
func (s Stats) SummaryOf(metric string) (Summary, bool) {
	switch metric {
	case "ttft":
		return s.TTFT, true
	case "ttft_sched":
		return s.TTFTSched, true
	case "itl":
		return s.ITL, true
	case "tpot":
		return s.TPOT, true
	case "e2e":
		return s.E2E, true
	case "e2e_sched":
		return s.E2ESched, true
	case "queue_wait":
		return s.QueueWait, true
	}
	return Summary{}, false
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

// FindKnees computes the three knees of s, leaving out failed levels and,
// unless its HealthPolicy says otherwise, levels where the client was
// unhealthy.
func (s *Sweep) FindKnees() {
	pts := make([]Point, len(s.Levels))
	s.Knees = Knees{}
	for i, l := range s.Levels {
		pts[i] = Point{Load: l.Load, Latency: math.NaN()}
		switch {
		case l.Run == nil:
			pts[i].Excluded = true
			s.Knees.Excluded = append(s.Knees.Excluded, ExcludedLevel{Load: l.Load, Reason: "level failed: " + l.Error})
			continue
		case l.Run.Interrupted:
			pts[i].Excluded = true
			s.Knees.Excluded = append(s.Knees.Excluded, ExcludedLevel{Load: l.Load, Reason: "interrupted before the window ended"})
		case !l.Run.Health.Healthy() && s.HealthPolicy != HealthWarn && s.HealthPolicy != HealthIgnore:
			pts[i].Excluded = true
			what := "client unhealthy: "
			if l.Run.Health.Verdict == VerdictHostStarved {
				what = "host starved: "
			}
			s.Knees.Excluded = append(s.Knees.Excluded, ExcludedLevel{Load: l.Load, Reason: what + joinReasons(l.Run.Health.Reasons)})
		case l.Run.MissingShare() > MaxMissingShare:
			// Its slowest requests are missing, so its latencies read low
			// and cannot be said to meet the SLO; its completions are
			// real, and falling that far behind is saturation's business.
			pts[i].Unreliable = true
			s.Knees.Excluded = append(s.Knees.Excluded, ExcludedLevel{Load: l.Load, Saturation: true, Reason: missingReason(l.Run)})
		}
		if v, ok := s.SLO.Value(l.Run); ok {
			pts[i].Latency = v
		}
		pts[i].ErrorRate = l.Run.Requests.ErrorRate()
		pts[i].Throughput, pts[i].ExpectedThroughput = l.throughput(s.Axis)
		pts[i].Arrivals = l.Run.Arrivals.WindowArrivals
		if c := l.Run.Calls; c != nil && c.Started+c.Shed > 0 {
			// A call's turns share its place in the window (a call on the
			// edge takes all its turns out): the sample is its calls.
			pts[i].Arrivals = c.Started + c.Shed
		}
		if s.Axis == "rate" {
			pts[i].QueueGrowth = QueueGrowth(l.Run.Arrivals)
		}
	}
	knee := func(i int) *Knee {
		k := &Knee{Load: pts[i].Load, Index: i}
		if lat := pts[i].Latency; !math.IsNaN(lat) && !math.IsInf(lat, 0) {
			k.LatencyMs = &lat
		}
		return k
	}
	if s.HealthPolicy == HealthWarn {
		for _, l := range s.Levels {
			if l.Run != nil && !l.Run.Health.Healthy() {
				s.Knees.JudgedUnhealthy = append(s.Knees.JudgedUnhealthy, ExcludedLevel{Load: l.Load,
					Reason: l.Run.Health.Verdict + ": " + joinReasons(l.Run.Health.Reasons)})
			}
		}
	}
	if i, ok := SLOKnee(pts, s.SLO.Threshold(), s.SLO.MaxErrorRate); ok {
		s.Knees.SLO = knee(i)
		s.Knees.SLONotReached = !SLOCrossed(pts, i)
	}
	i, shape := CurvatureKnee(pts, s.SLO.Threshold())
	s.Knees.CurveShape = string(shape)
	if shape == CurveKnee {
		s.Knees.Curvature = knee(i)
	}
	if i, ok := SaturationLevel(pts); ok {
		s.Knees.Saturation = knee(i)
	}
}

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
		row := make([]string, len(CSVHeader))
		for i, name := range CSVHeader {
			row[i] = col[name]
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// csvColumns fills a measured level's columns.
func (s *Sweep) csvColumns(l Level, col map[string]string, f func(float64) string) {
	r := l.Run
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
	sv := r.Server
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
