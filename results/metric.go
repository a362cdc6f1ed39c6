package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Metric is one figure knee reports of a level, as a value in one table
// (Metrics): its name, how it is read, its unit, which way is better. A
// latency is a distribution of per-request times in milliseconds, read at
// a percentile (ttft_sched.p95); a scalar is one number a level
// (throughput). SLOs, goodput, the gate, repeats, the page, the terminal
// and the exports all read this table, and every spelling of a figure is
// resolved by ParseMeasure.
type Metric struct {
	Name  string
	Title string
	Unit  string
	// Doc says what it is, for help and errors.
	Doc string
	// Stat picks a latency's distribution from a run's stats; nil for a
	// scalar.
	Stat func(*Stats) *Summary
	// Scalar reads a scalar figure of a run, when it has one.
	Scalar func(*Run) (float64, bool)
	// Higher is better (throughput); a latency or errors are better lower.
	Higher bool
	// Goodput says a per-request bound of vLLM's goodput may hold it
	// (--goodput); Field is the request's time it reads then.
	Goodput bool
	Field   Field
}

// Field is a request's time a latency is read from (bench/record reads
// its record's; TPOT is the mean gap after the first token).
type Field int

// The per-request times.
const (
	FieldNone Field = iota
	FieldTTFT
	FieldTTFTSched
	FieldTTFAT
	FieldTTFATSched
	FieldTPOT
	FieldE2E
	FieldE2ESched
)

// Latency says the metric is a distribution read at percentiles.
func (m Metric) Latency() bool { return m.Stat != nil }

// Metrics is the table, latencies first.
var Metrics = []Metric{
	{Name: "ttft", Title: "TTFT", Unit: "ms", Doc: "time to first token, from the send", Stat: func(s *Stats) *Summary { return &s.TTFT }, Goodput: true, Field: FieldTTFT},
	{Name: "ttft_sched", Title: "TTFT sched", Unit: "ms", Doc: "time to first token, from the scheduled arrival", Stat: func(s *Stats) *Summary { return &s.TTFTSched }, Goodput: true, Field: FieldTTFTSched},
	{Name: "ttfat", Title: "TTFAT", Unit: "ms", Doc: "time to the first answer token (not reasoning), from the send", Stat: func(s *Stats) *Summary { return &s.TTFAT }, Goodput: true, Field: FieldTTFAT},
	{Name: "ttfat_sched", Title: "TTFAT sched", Unit: "ms", Doc: "time to the first answer token, from the scheduled arrival", Stat: func(s *Stats) *Summary { return &s.TTFATSched }, Field: FieldTTFATSched},
	{Name: "itl", Title: "ITL", Unit: "ms", Doc: "gap between content events", Stat: func(s *Stats) *Summary { return &s.ITL }},
	{Name: "tpot", Title: "TPOT", Unit: "ms", Doc: "time per output token after the first", Stat: func(s *Stats) *Summary { return &s.TPOT }, Goodput: true, Field: FieldTPOT},
	{Name: "e2e", Title: "E2E", Unit: "ms", Doc: "a request's whole time, from the send", Stat: func(s *Stats) *Summary { return &s.E2E }, Goodput: true, Field: FieldE2E},
	{Name: "e2e_sched", Title: "E2E sched", Unit: "ms", Doc: "a request's whole time, from the scheduled arrival", Stat: func(s *Stats) *Summary { return &s.E2ESched }, Goodput: true, Field: FieldE2ESched},
	{Name: "queue_wait", Title: "queue wait", Unit: "ms", Doc: "time an arrival waited for a --max-concurrency slot", Stat: func(s *Stats) *Summary { return &s.QueueWait }},
	{Name: "throughput", Title: "throughput", Unit: "req/s", Doc: "completed requests per second", Higher: true,
		Scalar: func(r *Run) (float64, bool) { return r.Throughput.RequestsPerS, true }},
	{Name: "output_tokens_per_s", Title: "output tok/s", Unit: "tok/s", Doc: "output tokens per second", Higher: true,
		Scalar: func(r *Run) (float64, bool) { return r.Throughput.OutputTokensPerS, true }},
	{Name: "goodput", Title: "goodput", Unit: "req/s", Doc: "requests per second that met the goodput bounds", Higher: true,
		Scalar: func(r *Run) (float64, bool) {
			if r.Goodput == nil {
				return 0, false
			}
			return r.Goodput.RequestsPerS, true
		}},
	{Name: "errors", Title: "errors", Unit: "%", Doc: "failed requests, % of those finished",
		Scalar: func(r *Run) (float64, bool) {
			done := r.Requests.OK + r.Requests.Failed
			return 100 * float64(r.Requests.Failed) / float64(max(done, 1)), done > 0
		}},
	{Name: "joules_per_output_token", Title: "J/token", Unit: "J", Doc: "GPU energy per output token (--gpu-metrics-url)",
		Scalar: func(r *Run) (float64, bool) {
			if r.GPU == nil || !(r.GPU.JoulesPerOutputToken > 0) {
				return 0, false
			}
			return r.GPU.JoulesPerOutputToken, true
		}},
}

// MetricNamed is the metric of that name.
func MetricNamed(name string) (Metric, bool) {
	i := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return Metrics[i], true
}

// Latencies are the latency metrics' names, in the table's order.
func Latencies() []string {
	var out []string
	for _, m := range Metrics {
		if m.Latency() {
			out = append(out, m.Name)
		}
	}
	return out
}

// Percentiles are those a latency is read at.
var Percentiles = []float64{50, 90, 95, 99}

// Measure is a metric read one way: a latency at a percentile, or a
// scalar (Pct 0).
type Measure struct {
	Metric Metric
	Pct    float64
}

// String is the figure's one spelling: ttft_sched.p95, throughput.
func (f Measure) String() string {
	if f.Pct == 0 {
		return f.Metric.Name
	}
	return f.Metric.Name + ".p" + strconv.FormatFloat(f.Pct, 'f', -1, 64)
}

// Of is the figure's value in r, and whether r has it.
func (f Measure) Of(r *Run) (float64, bool) {
	if f.Metric.Scalar != nil {
		return f.Metric.Scalar(r)
	}
	s := f.Metric.Stat(&r.Stats)
	if s.Count == 0 {
		return 0, false
	}
	return s.At(f.Pct), true
}

// ParseMeasure reads a measure: METRIC.pNN for a latency at a percentile
// (ttft_sched.p95; the older METRIC_pNN, as --slo took it, is read alike)
// or a scalar's name (throughput). An unknown name says which it is
// nearest.
func ParseMeasure(s string) (Measure, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	name, pct := s, ""
	if i := strings.LastIndex(s, ".p"); i > 0 {
		name, pct = s[:i], s[i+2:]
	} else if i := strings.LastIndex(s, "_p"); i > 0 && isNumber(s[i+2:]) {
		name, pct = s[:i], s[i+2:]
	}
	m, ok := MetricNamed(name)
	if !ok {
		return Measure{}, &unknownMetric{name: name, near: Nearest(name, metricNames())}
	}
	if !m.Latency() {
		if pct != "" {
			return Measure{}, fmt.Errorf("%q: %s is one number a level, with no percentiles", s, m.Name)
		}
		return Measure{Metric: m}, nil
	}
	p, err := strconv.ParseFloat(pct, 64)
	if pct == "" || err != nil || !slices.Contains(Percentiles, p) {
		return Measure{}, fmt.Errorf("%q: a latency is read at a percentile, %s.pNN with NN one of 50, 90, 95, 99", s, m.Name)
	}
	return Measure{Metric: m, Pct: p}, nil
}

// MeasureList lists every measure a run can have: each latency at each
// percentile, then the scalars.
func MeasureList() []Measure {
	var out []Measure
	for _, m := range Metrics {
		if !m.Latency() {
			continue
		}
		for _, p := range Percentiles {
			out = append(out, Measure{Metric: m, Pct: p})
		}
	}
	for _, m := range Metrics {
		if !m.Latency() {
			out = append(out, Measure{Metric: m})
		}
	}
	return out
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return s != "" && err == nil
}

func metricNames() []string {
	out := make([]string, len(Metrics))
	for i, m := range Metrics {
		out[i] = m.Name
	}
	return out
}

// unknownMetric is a name no metric has: the one it is a typo of, when
// one is near, else every name.
type unknownMetric struct{ name, near string }

func (e *unknownMetric) Error() string {
	if e.near != "" {
		return fmt.Sprintf("no metric %q: did you mean %s?", e.name, e.near)
	}
	return fmt.Sprintf("no metric %q (%s)", e.name, strings.Join(metricNames(), ", "))
}
