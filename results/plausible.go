package results

import (
	"fmt"
	"maps"
	"slices"
)

// plausibleCounts says what in a result's counts and window cannot be a
// measurement; every command reading a result file refuses it, as merge
// does (a report once drew a run of -5 requests).
func plausibleCounts(r *Run) error {
	counts := map[string]int64{"requests.sent": r.Requests.Sent, "requests.ok": r.Requests.OK, "requests.failed": r.Requests.Failed,
		"requests.interrupted": r.Requests.Interrupted, "requests.warmup": r.Requests.Warmup,
		"requests.ramp": r.Requests.Ramp, "requests.ramp_running": r.Requests.RampRunning,
		"tokens.input_total": r.Tokens.InputTotal, "tokens.output_total": r.Tokens.OutputTotal, "tokens.cached_total": r.Tokens.CachedTotal}
	for k, v := range r.Requests.Errors {
		counts["requests.errors."+k] = v
	}
	for i, sl := range r.Slices {
		// Checked in place: a long run at a fine --slice has many.
		if v := min(sl.Sent, sl.Failed, sl.Completed); v < 0 {
			return fmt.Errorf("slices[%d] counts %d: not a count a run measures", i, v)
		}
		if v := max(sl.Sent, sl.Failed, sl.Completed); v > maxCount {
			return fmt.Errorf("slices[%d] counts %d: not a count a run measures", i, v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if v := counts[k]; v < 0 || v > maxCount {
			return fmt.Errorf("%s is %d: not a count a run measures", k, v)
		}
	}
	if w := r.WindowSeconds; !(w >= 0 && w < 1e9) {
		return fmt.Errorf("window_s is %v: not a span a run measures", w)
	}
	if err := plausibleStats(r.Stats); err != nil {
		return err
	}
	t := r.Throughput
	for _, f := range []struct {
		name string
		v    float64
	}{{"requests_per_s", t.RequestsPerS}, {"output_tokens_per_s", t.OutputTokensPerS},
		{"total_tokens_per_s", t.TotalTokensPerS}, {"inputs_per_s", t.InputsPerS}} {
		if !(f.v >= 0 && f.v <= maxRatePerS) {
			return fmt.Errorf("throughput.%s is %v: not a rate a run measures", f.name, f.v)
		}
	}
	// A mix's classes are runs of their own, checked alike.
	for _, name := range slices.Sorted(maps.Keys(r.Classes)) {
		if c := r.Classes[name]; c != nil {
			if err := plausibleCounts(c); err != nil {
				return fmt.Errorf("classes.%s: %w", name, err)
			}
		}
	}
	return nil
}

// maxLatencyMs bounds a latency in a result file: knee's histograms clamp
// at an hour, so far past that is an edited or foreign file, whose
// 1e308 once overflowed a calibration's error to infinity.
const maxLatencyMs = 1e9

// maxRatePerS bounds a throughput in a result file, a thousand times past
// what any box serves.
const maxRatePerS = 1e12

// plausibleStats refuses a latency no run measures: negative (which a
// calibration would score as no error at all) or past maxLatencyMs.
func plausibleStats(s Stats) error {
	for _, m := range Metrics {
		if !m.Latency() {
			continue
		}
		sum := m.Stat(&s)
		if sum.Count < 0 || sum.Count > maxCount {
			return fmt.Errorf("stats.%s.count is %d: not a count a run measures", m.Name, sum.Count)
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"mean", sum.Mean}, {"stddev", sum.Stddev}, {"min", sum.Min}, {"p50", sum.P50}, {"p90", sum.P90},
			{"p95", sum.P95}, {"p99", sum.P99}, {"max", sum.Max}} {
			if !(f.v >= 0 && f.v <= maxLatencyMs) {
				return fmt.Errorf("stats.%s.%s is %v ms: not a latency a run measures", m.Name, f.name, f.v)
			}
		}
	}
	return nil
}
