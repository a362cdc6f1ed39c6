package results

import (
	"bytes"
	"context"
	"fmt"
	"math"
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
	// MaxModelLen, when set, is the longest --max-model-len vLLM starts
	// the model with on these GPUs: its KV cache holds no request of the
	// model's whole context, and vLLM refuses to start at it.
	MaxModelLen int `json:"max_model_len,omitempty"`
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
	// Overruled are levels that fell short of their offer while a heavier
	// level kept pace with clearly more: judged without the saturation
	// rule, and passed over by the saturation knee (see shortfall.go).
	Overruled []ExcludedLevel `json:"overruled_shortfalls,omitempty"`
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
	if err := isKind(path, b, SweepKind); err != nil {
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
			return nil, fmt.Errorf("%s: levels[%d] (load %g): %w", path, i, l.Load, err)
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

// MeasuredNothing says a sweep was stopped before any level measured a
// request: its file holds nothing worth replacing another with.
func (s *Sweep) MeasuredNothing() bool {
	stopped := s.Interrupted
	for _, l := range s.Levels {
		if l.Run == nil {
			continue
		}
		if l.Run.Requests.OK+l.Run.Requests.Failed > 0 {
			return false
		}
		stopped = stopped || l.Run.Interrupted
	}
	return stopped
}
