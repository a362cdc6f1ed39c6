package results

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Repeats is what a level measured several times says of its spread:
// every repeat's own figures, and for each figure a 95% interval across
// the repeats.
//
// The interval is Student's t over the repeats' values, one value per
// repeat. It is not a bootstrap over requests: requests within a window
// queue behind one another, so they are not independent draws, and an
// interval over them would be too narrow, most of all for tail
// percentiles under load. A repeat is the unit that is independent (its
// own seed, its own prompts, run apart from the others), so the interval
// says where the figure a window of this length measures would fall.
type Repeats struct {
	Count  int    `json:"count"`
	Method string `json:"method"`
	// Each is every repeat's figures, in the order they ran.
	Each []RepeatFigures `json:"each"`
	// Intervals are keyed by figure name (FigureNames), for figures every
	// repeat measured.
	Intervals map[string]Interval `json:"intervals,omitempty"`
	// ServerIntervals are the server's own figures' intervals across the
	// repeats, keyed by the figure's name in its view ("TTFT p50"), for
	// those every repeat's server gave exactly. A percentile the server
	// only knows within a histogram bucket has none: an interval over
	// points interpolated in buckets would claim more than the buckets
	// say.
	ServerIntervals map[string]Interval `json:"server_intervals,omitempty"`
}

// RepeatFigures is one repeat's figures, by name (FigureNames), with the
// seed it drew its schedule from and its client's health; and what is
// not pooled across repeats, kept whole: the server's view of the
// repeat's window and its time slices.
type RepeatFigures struct {
	Seed   uint64 `json:"seed"`
	Health string `json:"health"`
	// Interrupted says the repeat was cut short (a signal): its figures
	// are kept here and pooled, but no interval counts it.
	Interrupted bool               `json:"interrupted,omitempty"`
	Figures     map[string]float64 `json:"figures"`
	// Calibration is the repeat's figures a calibration fits
	// (CalibrationMetrics), so that each repeat can be fitted alone.
	Calibration map[string]float64 `json:"calibration,omitempty"`
	Server      *Server            `json:"server,omitempty"`
	SliceS      float64            `json:"slice_s,omitempty"`
	Slices      []Slice            `json:"slices,omitempty"`
}

// Interval is a 95% confidence interval for the mean of a figure over
// repeats: Mean ± HalfWidth is [Low, High].
type Interval struct {
	Mean      float64 `json:"mean"`
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
	HalfWidth float64 `json:"half_width"`
}

// RepeatMethod says how Repeats' intervals are made.
const RepeatMethod = "95% Student's t interval across repeats (one value per repeat; requests within a window are not independent, so no bootstrap over them)"

// Confidence is the level of every interval knee reports.
const Confidence = 0.95

// FigureNames lists every figure a run can have (the metric table's
// measures): "ttft_sched.p95" and the like for each latency and
// percentile, then the scalars.
func FigureNames() []string {
	var names []string
	for _, m := range MeasureList() {
		names = append(names, m.String())
	}
	return names
}

// HigherIsBetter says which way a figure improves.
func HigherIsBetter(name string) bool {
	m, err := ParseMeasure(name)
	return err == nil && m.Metric.Higher
}

// Figures are a run's figures by name (FigureNames): only those it
// measured, and never NaN.
func Figures(r *Run) map[string]float64 {
	f := map[string]float64{}
	for _, m := range MeasureList() {
		if v, ok := m.Of(r); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			f[m.String()] = v
		}
	}
	return f
}

// IntervalOf is the 95% Student's t interval for the mean of values; ok
// is false for fewer than two values.
func IntervalOf(values []float64) (Interval, bool) {
	n := len(values)
	if n < 2 {
		return Interval{}, false
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(n)
	var ss float64
	for _, v := range values {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-Confidence)/2)
	h := t * sd / math.Sqrt(float64(n))
	return Interval{Mean: mean, Low: mean - h, High: mean + h, HalfWidth: h}, true
}

// NewRepeats gathers the repeats' figures and their intervals.
func NewRepeats(runs []*Run) *Repeats {
	rp := &Repeats{Count: len(runs), Method: RepeatMethod, Intervals: map[string]Interval{}}
	values := map[string][]float64{}
	server := map[string][]float64{}
	whole := 0
	for _, r := range runs {
		f := Figures(r)
		rp.Each = append(rp.Each, RepeatFigures{Seed: r.Config.Seed, Health: r.Health.Verdict, Interrupted: r.Interrupted,
			Figures: f, Calibration: calibrationFigures(r), Server: r.Server, SliceS: r.SliceS, Slices: r.Slices})
		if r.Interrupted {
			// A repeat cut short measured another window: no interval
			// counts it as one of the repeats.
			continue
		}
		whole++
		for k, v := range f {
			values[k] = append(values[k], v)
		}
		if r.Server != nil {
			for _, fig := range r.Server.Figures {
				if fig.Server != nil && !fig.Estimate && !math.IsNaN(*fig.Server) && !math.IsInf(*fig.Server, 0) {
					server[fig.Name] = append(server[fig.Name], *fig.Server)
				}
			}
		}
	}
	rp.Intervals = intervalsOver(values, whole)
	if len(server) > 0 {
		rp.ServerIntervals = intervalsOver(server, whole)
	}
	return rp
}

// intervalsOver is the interval of each figure every one of n repeats
// measured: a figure some repeat did not has none.
func intervalsOver(values map[string][]float64, n int) map[string]Interval {
	out := map[string]Interval{}
	for k, vs := range values {
		if len(vs) != n {
			continue
		}
		if iv, ok := IntervalOf(vs); ok {
			out[k] = iv
		}
	}
	return out
}

// PoolRepeats joins the runs of one level measured again and again, one
// after another, into the level's figures: histograms merged, so its
// percentiles are those of the union of the repeats' requests; counts
// summed; rates over the sum of their windows. It carries every repeat's
// own figures and the intervals across them (Repeats). A mix's classes
// are pooled alike, class by class.
func PoolRepeats(runs []*Run) (*Run, error) {
	if len(runs) < 2 {
		return nil, errors.New("pooling needs two repeats or more")
	}
	first := runs[0]
	m := &Run{SchemaVersion: SchemaVersion, Config: first.Config, Environment: first.Environment, StartedAt: first.StartedAt,
		WindowStartedAt: first.WindowStartedAt, Histograms: Histograms{}}
	for i, r := range runs {
		if r.Histograms == nil {
			return nil, fmt.Errorf("repeat %d kept no histograms: its percentiles cannot be pooled", i+1)
		}
		m.WindowSeconds += r.WindowSeconds
		m.Interrupted = m.Interrupted || r.Interrupted
	}
	if err := mergeHistograms(m, runs); err != nil {
		return nil, fmt.Errorf("pooling repeats: %w", err)
	}
	mergeCounts(m, runs)
	mergeTools(m, runs)
	mergeImages(m, runs)
	if err := mergeReasoning(m, runs); err != nil {
		return nil, err
	}
	mergeRates(m, runs)
	poolRates(m, runs)
	mergeHealth(m, runs, "repeat", 1)
	poolCalls(m, runs)
	if err := mergeTurns(m, runs); err != nil {
		return nil, err
	}
	poolGPU(m, runs)
	if err := poolClasses(m, runs); err != nil {
		return nil, err
	}
	m.Repeats = NewRepeats(runs)
	if m.Repeats.Same() {
		m.Notes = append(m.Notes, SameNote)
	}
	m.Notes = append(m.Notes, fmt.Sprintf("pooled from %d repeats run one after another: percentiles are of the union of their requests, counts summed, rates over the sum of their windows (%.1f s); each figure's interval is across the repeats", len(runs), m.WindowSeconds))
	if first.Server != nil {
		m.Notes = append(m.Notes, "the server's view is not pooled: each repeat's is kept whole (repeats.each[].server), with intervals across the repeats of the figures the server gave exactly (repeats.server_intervals)")
	}
	if first.Slices != nil {
		m.Notes = append(m.Notes, "the repeats' time slices are not pooled (each covers its own window): each repeat's are kept (repeats.each[].slices)")
	}
	m.Warnings = append(m.Warnings, SmallPrint(m)...)
	m.Warnings = append(m.Warnings, repeatWarnings(runs)...)
	if cut := interruptedRepeats(runs); cut != "" {
		m.Warnings = append(m.Warnings, cut)
	}
	return m, nil
}

// poolCalls pools the repeats' calls: counted as concurrent shards would
// be, but the repeats ran one after another, so the level's concurrency
// and Little's law are their means over their windows.
func poolCalls(m *Run, runs []*Run) {
	mergeCalls(m, runs)
	if m.Calls == nil {
		return
	}
	var conc, little float64
	for _, r := range runs {
		if c := r.Calls; c != nil {
			conc += c.AchievedConcurrency * r.WindowSeconds
			little += c.LittlesLaw * r.WindowSeconds
		}
	}
	m.Calls.AchievedConcurrency, m.Calls.LittlesLaw = conc/m.WindowSeconds, little/m.WindowSeconds
}

// interruptedRepeats says which repeats were cut short and that no
// interval counts them ("" when none was).
func interruptedRepeats(runs []*Run) string {
	var cut []string
	for i, r := range runs {
		if r.Interrupted {
			cut = append(cut, strconv.Itoa(i+1))
		}
	}
	switch {
	case len(cut) == 0:
		return ""
	case len(runs)-len(cut) < 2:
		return fmt.Sprintf("repeat %s was interrupted: fewer than two whole repeats are left, so no figure has an interval", strings.Join(cut, ", "))
	}
	return fmt.Sprintf("repeat %s was interrupted: its figures are pooled, but the intervals are across the %d whole repeats only", strings.Join(cut, ", "), len(runs)-len(cut))
}

// repeatWarnings are the repeats' own warnings, each said once: a warning
// several repeats gave, but for its figures, names them all and keeps
// the first one's figures.
func repeatWarnings(runs []*Run) []string {
	type seen struct {
		text    string
		repeats []string
	}
	var order []string
	byKind := map[string]*seen{}
	for i, r := range runs {
		own := SmallPrint(r)
		for _, w := range r.Warnings {
			if slices.Contains(own, w) {
				continue
			}
			kind := strings.Map(func(c rune) rune {
				if c >= '0' && c <= '9' || c == '.' || c == ',' {
					return -1
				}
				return c
			}, w)
			if byKind[kind] == nil {
				byKind[kind] = &seen{text: w}
				order = append(order, kind)
			}
			byKind[kind].repeats = append(byKind[kind].repeats, fmt.Sprint(i+1))
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		s := byKind[k]
		who := "repeat " + s.repeats[0]
		if n := len(s.repeats); n > 1 {
			who = fmt.Sprintf("repeats %s (%s's figures)", strings.Join(s.repeats, ", "), s.repeats[0])
		}
		out = append(out, who+": "+s.text)
	}
	return out
}

// poolRates makes the rates merged as if summed over concurrent shards
// the repeats' means, each weighted by its window.
func poolRates(m *Run, runs []*Run) {
	var achieved, offered, target float64
	for _, r := range runs {
		achieved += r.Arrivals.AchievedRate * r.WindowSeconds
		offered += r.Arrivals.OfferedRate * r.WindowSeconds
		target += r.Arrivals.TargetRate * r.WindowSeconds
	}
	if w := m.WindowSeconds; w > 0 {
		m.Arrivals.AchievedRate, m.Arrivals.OfferedRate, m.Arrivals.TargetRate = achieved/w, offered/w, target/w
	}
}

// poolGPU sums the GPUs' energy over the repeats' windows, each GPU by
// its place in the list, and divides it by the pooled work. Repeats that
// did not all scrape the same GPUs keep no pooled figures.
func poolGPU(m *Run, runs []*Run) {
	first := runs[0].GPU
	if first == nil {
		return
	}
	g := GPUFigures{GPUs: slices.Clone(first.GPUs)}
	for i := range g.GPUs {
		g.GPUs[i].EnergyJ, g.GPUs[i].PowerMeanW = 0, 0
	}
	for _, r := range runs {
		if r.GPU == nil || len(r.GPU.GPUs) != len(g.GPUs) {
			m.Notes = append(m.Notes, "the repeats scraped different GPUs: their GPU figures are not pooled")
			return
		}
		g.WindowS += r.GPU.WindowS
		g.EnergyJ += r.GPU.EnergyJ
		g.PowerMaxW = math.Max(g.PowerMaxW, r.GPU.PowerMaxW)
		for i, one := range r.GPU.GPUs {
			p := &g.GPUs[i]
			p.EnergyJ += one.EnergyJ
			p.PowerMaxW = math.Max(p.PowerMaxW, one.PowerMaxW)
			if one.EnergySource != p.EnergySource {
				p.EnergySource = "counter and integrated power"
			}
		}
		g.Warnings = append(g.Warnings, r.GPU.Warnings...)
	}
	if g.WindowS > 0 {
		g.PowerMeanW = g.EnergyJ / g.WindowS
		for i := range g.GPUs {
			g.GPUs[i].PowerMeanW = g.GPUs[i].EnergyJ / g.WindowS
		}
	}
	g.PerWork(m)
	m.GPU = &g
}

// Plus formats an interval's half-width beside a figure, "± 31", in the
// figure's own precision; empty without an interval.
func (rp *Repeats) Plus(name string, format func(float64) string) string {
	if rp == nil {
		return ""
	}
	iv, ok := rp.Intervals[name]
	if !ok {
		return ""
	}
	return "± " + strings.TrimSpace(format(iv.HalfWidth))
}

// Same says every repeat gave every figure alike (each interval of width
// 0, but for the last bits of a float): the seed changed nothing they
// depend on, as in a prediction of fixed-length requests without
// step-time variance. Their "± 0" is then no measure of how a server's
// figures spread.
func (rp *Repeats) Same() bool {
	if rp == nil || len(rp.Intervals) == 0 {
		return false
	}
	for _, iv := range rp.Intervals {
		if iv.HalfWidth > 1e-9*math.Abs(iv.Mean) {
			return false
		}
	}
	return true
}

// SameNote says so.
const SameNote = "every repeat gave the same figures: the seed changed nothing they depend on (a prediction of fixed-length requests without step_time_cv leaves it nothing to vary), so ± 0 says nothing of how a server's figures spread"
