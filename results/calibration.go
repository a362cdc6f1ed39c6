package results

import (
	"encoding/json"
	"fmt"
	"math"
)

// Calibration is the outcome of fitting the simulator's cost model to a
// measured run or sweep: the parameters found, how well each level is
// reproduced before and after, and how well the levels the fit never saw
// are.
type Calibration struct {
	// Measured names the measured file and Model the simulated model.
	Measured string `json:"measured"`
	Model    string `json:"model"`
	Origin   string `json:"origin"`
	// Metrics are the figures compared per level (see CalibrationMetrics).
	Metrics []string          `json:"metrics"`
	Params  []FittedParam     `json:"params"`
	Levels  []CalibratedLevel `json:"levels"`
	// Errors are mean absolute errors in percent over every metric of the
	// levels of each group, with the starting and the fitted parameters.
	Train   FitError `json:"train"`
	HeldOut FitError `json:"held_out"`
	// Evaluations counts the replays of the training levels the search
	// made.
	Evaluations int      `json:"evaluations"`
	Notes       []string `json:"notes,omitempty"`
	// Verdict is FitGood or FitPoor; Problems say why a fit is poor
	// (errors past the tolerance, held-out levels predicted worse than
	// before the fit, parameters pinned at the edge of their range), and
	// Tolerance is the error in percent a good fit stays within.
	Verdict   string   `json:"verdict,omitempty"`
	Problems  []string `json:"problems,omitempty"`
	Tolerance float64  `json:"tolerance_pct,omitempty"`
	// Interrupted says the search was stopped before it ended: Params are
	// the best point it had reached, and no level was replayed with them.
	Interrupted bool `json:"interrupted,omitempty"`
}

// The verdicts of a calibration.
const (
	FitGood = "good"
	FitPoor = "poor"
)

// FittedParam is one cost-model parameter: where the search started, where
// it ended and how well the data pins it down.
type FittedParam struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit,omitempty"`
	Start float64 `json:"start"`
	Value float64 `json:"value"`
	// Fixed parameters were not searched.
	Fixed bool `json:"fixed,omitempty"`
	// StdErr is the standard error from the curvature of the loss at the
	// fit (σ²·(JᵀJ)⁻¹ of the log residuals). Determined is false when the
	// data hardly constrains the parameter (singular curvature, or a
	// standard error above half its value); StdErr is then 0 or large.
	StdErr     float64 `json:"std_err"`
	Determined bool    `json:"determined"`
	// PassValues are the parameter fitted to each repeat of a repeated
	// sweep alone; StdErrFrom is "repeats" when their spread over √n,
	// wider than the curvature's, is the standard error: it sees what
	// one pass's levels share (the host's state), which the curvature
	// cannot.
	PassValues []float64 `json:"pass_values,omitempty"`
	StdErrFrom string    `json:"std_err_from,omitempty"`
	// AtBound is "lower" or "upper" when the fit pinned the parameter at
	// the edge of the range searched: the data asks for a machine outside
	// what the starting model can be tuned to.
	AtBound string `json:"at_bound,omitempty"`
}

// CalibratedLevel is one measured level replayed in virtual time.
type CalibratedLevel struct {
	Load    float64 `json:"load"`
	HeldOut bool    `json:"held_out,omitempty"`
	// Skipped says why a level took no part (an error, a client-limited
	// measurement, too few requests).
	Skipped string      `json:"skipped,omitempty"`
	Metrics []MetricFit `json:"metrics,omitempty"`
}

// MetricFit is one figure of a level: measured, replayed with the starting
// parameters and with the fitted ones. A replayed figure of 0 means the
// replay measured none.
type MetricFit struct {
	Metric   string  `json:"metric"`
	Measured float64 `json:"measured"`
	Start    float64 `json:"start"`
	Fitted   float64 `json:"fitted"`
}

// FitError summarises the errors of a group of levels.
type FitError struct {
	Levels         int     `json:"levels"`
	StartPercent   float64 `json:"start_error_pct"`
	FittedPercent  float64 `json:"fitted_error_pct"`
	WorstPercent   float64 `json:"fitted_worst_pct"`
	WorstMetric    string  `json:"fitted_worst_metric,omitempty"`
	WorstLevelLoad float64 `json:"fitted_worst_load,omitempty"`
}

// CalibrationMetrics are the figures a calibration compares, with the
// value each takes in a run (ok false when the run has none).
var CalibrationMetrics = []struct {
	Name  string
	Value func(r *Run) (float64, bool)
}{
	{"ttft_p50_ms", func(r *Run) (float64, bool) { return r.Stats.TTFT.P50, r.Stats.TTFT.Count > 0 }},
	{"ttft_p90_ms", func(r *Run) (float64, bool) { return r.Stats.TTFT.P90, r.Stats.TTFT.Count > 0 }},
	{"tpot_mean_ms", func(r *Run) (float64, bool) { return r.Stats.TPOT.Mean, r.Stats.TPOT.Count > 0 }},
	{"itl_p50_ms", func(r *Run) (float64, bool) { return r.Stats.ITL.P50, r.Stats.ITL.Count > 0 }},
	{"itl_p90_ms", func(r *Run) (float64, bool) { return r.Stats.ITL.P90, r.Stats.ITL.Count > 0 }},
	{"output_tokens_per_s", func(r *Run) (float64, bool) {
		return r.Throughput.OutputTokensPerS, r.Throughput.OutputTokensPerS > 0
	}},
}

// calibrationFigures are r's CalibrationMetrics by name: those it has.
func calibrationFigures(r *Run) map[string]float64 {
	out := map[string]float64{}
	for _, m := range CalibrationMetrics {
		if v, ok := m.Value(r); ok && v > 0 && !math.IsInf(v, 0) {
			out[m.Name] = v
		}
	}
	return out
}

// PercentError is the error of got against want in percent, 0 when want
// is not positive, and never NaN.
func PercentError(got, want float64) float64 {
	if want <= 0 || math.IsNaN(got) || math.IsInf(got, 0) {
		return 0
	}
	return 100 * ((got - want) / want) // divided first: 100 × 1e308 overflows
}

// Summarise fills Train and HeldOut from the levels.
func (c *Calibration) Summarise() {
	c.Train, c.HeldOut = FitError{}, FitError{}
	type acc struct {
		start, fitted float64
		n             int
	}
	var sums [2]acc
	for _, l := range c.Levels {
		if l.Skipped != "" || len(l.Metrics) == 0 {
			continue
		}
		g, e := 0, &c.Train
		if l.HeldOut {
			g, e = 1, &c.HeldOut
		}
		e.Levels++
		for _, m := range l.Metrics {
			s, f := math.Abs(PercentError(m.Start, m.Measured)), math.Abs(PercentError(m.Fitted, m.Measured))
			sums[g].start += s
			sums[g].fitted += f
			sums[g].n++
			if f > e.WorstPercent {
				e.WorstPercent, e.WorstMetric, e.WorstLevelLoad = f, m.Metric, l.Load
			}
		}
	}
	for g, e := range []*FitError{&c.Train, &c.HeldOut} {
		if n := sums[g].n; n > 0 {
			e.StartPercent, e.FittedPercent = sums[g].start/float64(n), sums[g].fitted/float64(n)
		}
	}
}

// DecodeCalibration reads a calibration file (knee calibrate --json),
// refusing any other.
func DecodeCalibration(path string, b []byte) (*Calibration, error) {
	var c Calibration
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if c.Measured == "" || len(c.Params) == 0 {
		return nil, fmt.Errorf("%s: not a calibration (knee calibrate --json) file", path)
	}
	return &c, nil
}
