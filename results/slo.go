package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SLO is a service-level objective: what a level must do to count as
// served. It is met when every latency bound holds, errors stay under
// MaxErrorRate, at most MaxMissingShare of the requests are missing from
// the percentiles, MinGoodPercent of the finished requests (when set) met
// every goodput bound, and an open loop kept pace with its arrivals. One
// SLO, judged by Judge, decides the SLO knee of a sweep, when a sweep
// stops, what a plan accepts and what the report page marks.
type SLO struct {
	Bounds         []Bound
	MaxErrorRate   float64
	MinGoodPercent float64
}

// Bound is one latency bound: a percentile of a latency of the metric
// table (Latencies) at most Ms.
type Bound struct {
	Metric     string  `json:"metric"`
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
}

// String writes the bound as --slo takes it: ttft_sched.p95:500.
func (b Bound) String() string {
	return fmt.Sprintf("%s.p%s:%s", b.Metric, strconv.FormatFloat(b.Percentile, 'f', -1, 64), strconv.FormatFloat(b.Ms, 'f', -1, 64))
}

// Key is the bound as plan files name it ("ttft_p95:500"): the spelling
// they were first written in, kept so that files old and new read alike
// and a plan's bytes do not change with the flags' spelling.
func (b Bound) Key() string {
	return fmt.Sprintf("%s_p%s:%s", b.Metric, strconv.FormatFloat(b.Percentile, 'f', -1, 64), strconv.FormatFloat(b.Ms, 'f', -1, 64))
}

// Value is the bound's metric in r, in ms, and whether r has it.
func (b Bound) Value(r *Run) (float64, bool) {
	s, ok := r.Stats.SummaryOf(b.Metric)
	if !ok || s.Count == 0 {
		return 0, false
	}
	switch b.Percentile {
	case 50:
		return s.P50, true
	case 90:
		return s.P90, true
	case 95:
		return s.P95, true
	case 99:
		return s.P99, true
	}
	return 0, false
}

// maxBoundMs is the largest latency bound taken: a day.
const maxBoundMs = 86_400_000

// ParseBounds reads an SLO's bounds as --slo gives them: METRIC.pNN:MS,
// comma-separated (ttft.p95:500,tpot.p50:50; the older ttft_p95 is read
// alike, ParseMeasure), and goodput:PERCENT for the
// share of finished requests that must meet every --goodput bound. It
// returns the bounds and the goodput share (0 when not given).
func ParseBounds(s string) ([]Bound, float64, error) {
	var out []Bound
	good := 0.0
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, ok := strings.Cut(part, ":")
		if ok && key == "goodput" {
			v, err := strconv.ParseFloat(val, 64)
			if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return nil, 0, fmt.Errorf("%q: the share is not a finite number", part)
			}
			if err != nil || !(v > 0) || v > 100 {
				return nil, 0, fmt.Errorf("%q: goodput:PERCENT takes a share of requests in (0, 100]", part)
			}
			good = v
			continue
		}
		if !ok {
			return nil, 0, fmt.Errorf("%q: want METRIC.pNN:MS, e.g. ttft_sched.p95:500", part)
		}
		m, err := ParseMeasure(key)
		if err != nil {
			return nil, 0, fmt.Errorf("%q: %w", part, err)
		}
		if !m.Metric.Latency() {
			return nil, 0, fmt.Errorf("%q: a bound holds a latency (%s) at a percentile; %s is not one", part, strings.Join(Latencies(), ", "), m.Metric.Name)
		}
		metric, pct := m.Metric.Name, m.Pct
		ms, err := strconv.ParseFloat(val, 64)
		if err == nil && (math.IsNaN(ms) || math.IsInf(ms, 0)) {
			return nil, 0, fmt.Errorf("%q: the bound is not a finite number", part)
		}
		if err != nil || !(ms > 0) || ms > maxBoundMs {
			return nil, 0, fmt.Errorf("%q: the bound is a number of milliseconds above 0 and at most %d (a day)", part, maxBoundMs)
		}
		out = append(out, Bound{Metric: metric, Percentile: pct, Ms: ms})
	}
	if len(out) == 0 && good == 0 {
		return nil, 0, errors.New("no bound given")
	}
	return out, good, nil
}

// GoodputMetric is the curve's name when an SLO has no latency bound, only
// a goodput share: the percentage of finished requests that were not
// good.
const GoodputMetric = "goodput"

// Metric is the metric a sweep's curve shows and its knees are found on:
// the first bound's, or GoodputMetric for an SLO of goodput alone.
func (o SLO) Metric() string {
	if len(o.Bounds) == 0 {
		if o.MinGoodPercent > 0 {
			return GoodputMetric
		}
		return ""
	}
	return o.Bounds[0].Metric
}

// Percentile is the curve's percentile (0 for goodput).
func (o SLO) Percentile() float64 {
	if len(o.Bounds) == 0 {
		return 0
	}
	return o.Bounds[0].Percentile
}

// ThresholdMs is the first bound's, in ms (0 for goodput).
func (o SLO) ThresholdMs() float64 {
	if len(o.Bounds) == 0 {
		return 0
	}
	return o.Bounds[0].Ms
}

// Value is the curve's figure of a run: the first bound's latency in ms,
// or for goodput the percentage of finished requests that were not good,
// so that for both lower is better and Threshold is the bound. ok is
// false when the run measured none.
func (o SLO) Value(r *Run) (float64, bool) {
	if len(o.Bounds) == 0 {
		if r.Goodput == nil || r.Goodput.Finished == 0 {
			return 0, false
		}
		return 100 * (1 - r.Goodput.Share), true
	}
	return o.Bounds[0].Value(r)
}

// Threshold is the bound Value must not exceed.
func (o SLO) Threshold() float64 {
	if len(o.Bounds) == 0 {
		return 100 - o.MinGoodPercent
	}
	return o.Bounds[0].Ms
}

// String describes the SLO in words.
func (o SLO) String() string {
	return o.BoundsText() + fmt.Sprintf(", errors under %g%%", 100*o.MaxErrorRate)
}

// BoundsText describes the SLO's bounds and goodput share in words.
func (o SLO) BoundsText() string {
	var parts []string
	for _, b := range o.Bounds {
		parts = append(parts, fmt.Sprintf("%s p%g ≤ %g ms", b.Metric, b.Percentile, b.Ms))
	}
	if o.MinGoodPercent > 0 {
		parts = append(parts, fmt.Sprintf("goodput ≥ %g%%", o.MinGoodPercent))
	}
	return strings.Join(parts, ", ")
}

// sloJSON is an SLO as files carry it: its bounds, and its curve's
// metric, percentile and threshold as sweep files always had them, for
// readers that know only those.
type sloJSON struct {
	Metric         string  `json:"metric"`
	Percentile     float64 `json:"percentile"`
	ThresholdMs    float64 `json:"threshold_ms"`
	Bounds         []Bound `json:"bounds"`
	MaxErrorRate   float64 `json:"max_error_rate"`
	MinGoodPercent float64 `json:"min_good_percent,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (o SLO) MarshalJSON() ([]byte, error) {
	b := o.Bounds
	if b == nil {
		b = []Bound{}
	}
	return json.Marshal(sloJSON{Metric: o.Metric(), Percentile: o.Percentile(), ThresholdMs: o.ThresholdMs(), Bounds: b,
		MaxErrorRate: o.MaxErrorRate, MinGoodPercent: o.MinGoodPercent})
}

// UnmarshalJSON implements json.Unmarshaler: files with bounds, and sweep
// files from before them, whose one bound was its metric, percentile and
// threshold.
func (o *SLO) UnmarshalJSON(b []byte) error {
	var j sloJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*o = SLO{Bounds: j.Bounds, MaxErrorRate: j.MaxErrorRate, MinGoodPercent: j.MinGoodPercent}
	if len(j.Bounds) == 0 {
		o.Bounds = nil
	}
	if j.Bounds == nil && j.Metric != "" && j.Metric != GoodputMetric {
		o.Bounds = []Bound{{Metric: j.Metric, Percentile: j.Percentile, Ms: j.ThresholdMs}}
	}
	return nil
}

// SLOFlags is an SLO as knee's flags give it: --slo (Spec), its older
// spellings (a bare --slo MS of --slo-metric at --slo-percentile, and
// --goodput-share), --max-error-rate and --goodput, which a goodput
// share needs. Given reports which flags were given (nil: none).
type SLOFlags struct {
	Spec, Metric                        string
	Percentile, GoodShare, MaxErrorRate float64
	Goodput                             string
	Given                               func(flag string) bool
}

// SLO reads the flags; every error names the flag at fault.
func (f SLOFlags) SLO() (SLO, error) {
	given := func(flag string) bool { return f.Given != nil && f.Given(flag) }
	if !(f.MaxErrorRate > 0) || f.MaxErrorRate > 1 {
		return SLO{}, errors.New("--max-error-rate must be in (0, 1]")
	}
	spec := strings.TrimSpace(f.Spec)
	oldSpelling := given("slo-metric") || given("slo-percentile")
	v, err := strconv.ParseFloat(spec, 64)
	if err != nil && oldSpelling && given("slo") {
		return SLO{}, fmt.Errorf("--slo %s names its metrics: leave out --slo-metric and --slo-percentile, the older spelling of a bare --slo MS", spec)
	}
	if err == nil || oldSpelling {
		// The older spelling: --slo MS of --slo-metric at --slo-percentile,
		// 300 ms (or 90% good) when only the metric is given.
		switch {
		case err == nil:
		case f.Metric == GoodputMetric:
			v = 90
		default:
			v = 300
		}
		spec = fmt.Sprintf("%s_p%s:%s", f.Metric, strconv.FormatFloat(f.Percentile, 'f', -1, 64), strconv.FormatFloat(v, 'f', -1, 64))
		if f.Metric == GoodputMetric {
			spec = "goodput:" + strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	bounds, good, err := ParseBounds(spec)
	if err != nil {
		return SLO{}, fmt.Errorf("--slo: %w", err)
	}
	if given("goodput-share") {
		if !(f.GoodShare > 0) || f.GoodShare > 100 {
			return SLO{}, errors.New("--goodput-share is a percentage in (0, 100]")
		}
		good = f.GoodShare
	}
	if good > 0 && f.Goodput == "" {
		return SLO{}, errors.New("a goodput share in the SLO needs --goodput bounds, e.g. --goodput ttft:300,tpot:50")
	}
	return SLO{Bounds: bounds, MaxErrorRate: f.MaxErrorRate, MinGoodPercent: good}, nil
}
