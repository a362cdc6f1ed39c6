package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/kneebench/knee/results"
)

// The data a report page embeds for its script to draw: figures only,
// never a path to fetch. JSON names are the script's.

type pageData struct {
	Compare     bool       `json:"compare,omitempty"`
	Sweeps      []sweepJS  `json:"sweeps,omitempty"`
	Runs        []runJS    `json:"runs,omitempty"`
	Plan        *planJS    `json:"plan,omitempty"`
	Calibration *calJS     `json:"calibration,omitempty"`
	Dashboard   *dashboard `json:"dashboard,omitempty"`
}

// dashboard says a page is a live view: its script follows the events.
type dashboard struct {
	Events string `json:"events"`
	// History is the progress so far, for the view's time series.
	History []LiveStatus `json:"history"`
}

type sweepJS struct {
	Label string `json:"label"`
	// Source says how its figures came: "predicted" in virtual time or
	// "measured" against a server.
	Source    string    `json:"source"`
	Axis      string    `json:"axis"`
	AxisLabel string    `json:"axisLabel"`
	Unit      string    `json:"unit"`
	SLO       sloJS     `json:"slo"`
	SLOKnee   string    `json:"sloKnee"`
	Knees     []kneeJS  `json:"knees"`
	Levels    []levelJS `json:"levels"`
	// Tokens names the levels' tokPerS: "output", or a pooling
	// endpoint's "prompt" (it generates none).
	Tokens string `json:"tokens"`
}

type sloJS struct {
	Metric     string  `json:"metric"`
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
	MinGood    float64 `json:"minGood,omitempty"`
}

type kneeJS struct {
	Kind  string  `json:"kind"`
	Load  float64 `json:"load"`
	Short string  `json:"short"`
}

type levelJS struct {
	Load     float64 `json:"load"`
	Excluded string  `json:"excluded,omitempty"`
	// Judged, Meets and Gate are the sweep's verdict on the level
	// (results.Verdict): the page takes it rather than deciding again.
	// Gate, on a miss, is why no latency bound would make it meet.
	Judged   bool                          `json:"judged"`
	Meets    bool                          `json:"meets"`
	Gate     string                        `json:"gate,omitempty"`
	Stats    map[string]map[string]float64 `json:"stats,omitempty"`
	ReqPerS  float64                       `json:"reqPerS"`
	TokPerS  float64                       `json:"tokPerS"`
	Offered  float64                       `json:"offered,omitempty"`
	Goodput  *float64                      `json:"goodput,omitempty"`
	CacheHit *float64                      `json:"cacheHit,omitempty"`
	Dist     map[string][][2]float64       `json:"dist,omitempty"`
	Slices   *slicesJS                     `json:"slices,omitempty"`
	// CI are a repeated level's 95% intervals across its repeats, by
	// figure name (ttft_sched.p95), low and high.
	CI map[string][2]float64 `json:"ci,omitempty"`
}

type runJS struct {
	Dist   map[string][][2]float64 `json:"dist,omitempty"`
	Slices *slicesJS               `json:"slices,omitempty"`
	// RepeatSlices are a repeated run's slices, repeat by repeat (a
	// pooled run has none of its own).
	RepeatSlices []*slicesJS `json:"repeatSlices,omitempty"`
	Rates        []barJS     `json:"rates,omitempty"`
	Timeline     *timelineJS `json:"timeline,omitempty"`
	// ClassTTFT and ClassGood are a mix's classes' TTFT p95 from the
	// schedule and goodput share (%), largest class first.
	ClassTTFT []barJS `json:"classTTFT,omitempty"`
	ClassGood []barJS `json:"classGood,omitempty"`
}

type barJS struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

type timelineJS struct {
	T        []float64 `json:"t"`
	Sent     []float64 `json:"sent"`
	Done     []float64 `json:"done"`
	Inflight []float64 `json:"inflight"`
}

type planJS struct {
	Unit string      `json:"unit"`
	Rows []planRowJS `json:"rows"`
	Day  *dayJS      `json:"day,omitempty"`
}

// dayJS is a day plan's minutes: the rate, and each policy's replicas
// and share of arrivals meeting the SLO.
type dayJS struct {
	Rate     []float64     `json:"rate"`
	Policies []dayPolicyJS `json:"policies"`
}

type dayPolicyJS struct {
	Name       string    `json:"name"`
	Replicas   []int     `json:"replicas"`
	Attainment []float64 `json:"attainment"`
}

type planRowJS struct {
	Label       string  `json:"label"`
	Meets       bool    `json:"meets"`
	CostPerHour float64 `json:"costPerHour"`
	Headroom    float64 `json:"headroom"`
}

type calJS struct {
	Metrics []string     `json:"metrics"`
	Levels  []calLevelJS `json:"levels"`
}

type calLevelJS struct {
	Load    float64               `json:"load"`
	HeldOut bool                  `json:"heldOut"`
	Values  map[string][3]float64 `json:"values"`
}

// statsJS are a run's latency percentiles by metric, as the charts take
// them.
func statsJS(r *results.Run) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, m := range results.Metrics {
		if !m.Latency() || m.Stat(&r.Stats).Count == 0 {
			continue
		}
		s := m.Stat(&r.Stats)
		out[m.Name] = map[string]float64{"p50": s.P50, "p90": s.P90, "p95": s.P95, "p99": s.P99, "mean": s.Mean}
	}
	return out
}

// distPercentiles are where a distribution's curve is read.
var distPercentiles = []float64{0, 10, 25, 50, 75, 90, 95, 98, 99, 99.5, 99.9, 99.99}

// distJS reads the run's HDR histograms of the main latencies as
// percentile curves, in ms.
func distJS(r *results.Run) map[string][][2]float64 {
	out := map[string][][2]float64{}
	for _, m := range []string{"ttft", "ttft_sched", "itl", "e2e", "ttfat"} {
		if m == "ttfat" && r.Reasoning == nil {
			// Without thought the first answer token is the first token.
			continue
		}
		enc, ok := r.Histograms[m+"_us"]
		if !ok {
			continue
		}
		h, err := results.DecodeHistogram(enc)
		if err != nil || h.TotalCount() == 0 {
			continue
		}
		var pts [][2]float64
		for _, p := range distPercentiles {
			v := float64(h.ValueAtQuantile(p)) / 1000
			if p == 0 {
				v = float64(h.Min()) / 1000
			}
			pts = append(pts, [2]float64{p, math.Max(v, 0.001)})
		}
		out[m] = pts
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// kneesData are a sweep's knees as the charts mark them, and its SLO
// knee in words.
func kneesData(k results.Knees, unit string) ([]kneeJS, string) {
	var out []kneeJS
	for _, kn := range []struct {
		kind, name string
		k          *results.Knee
	}{{"slo", "SLO knee", k.SLO}, {"curvature", "curvature knee", k.Curvature}, {"saturation", "saturation", k.Saturation}} {
		if kn.k != nil && !(kn.kind == "slo" && k.SLONotReached) {
			out = append(out, kneeJS{Kind: kn.kind, Load: kn.k.Load, Short: kn.name})
		}
	}
	switch {
	case k.SLO != nil && k.SLONotReached:
		return out, "not reached (every level judged meets it, up to " + num(k.SLO.Load, -1) + results.LoadUnit(k.SLO.Load, unit) + ")"
	case k.SLO != nil:
		return out, num(k.SLO.Load, -1) + results.LoadUnit(k.SLO.Load, unit)
	}
	return out, "none"
}

// sweepData is a sweep as the charts take it.
func sweepData(s *results.Sweep) sweepJS {
	js := sweepJS{Label: s.Label, Source: sourceOf(s), Axis: s.Axis, AxisLabel: axisLabel(s), Unit: axisUnit(s),
		SLO: sloJS{Metric: s.SLO.Metric(), Percentile: s.SLO.Percentile(), Ms: s.SLO.ThresholdMs(), MinGood: s.SLO.MinGoodPercent}}
	js.Knees, js.SLOKnee = kneesData(s.Knees, js.Unit)
	js.Tokens = s.Config.Tokens()
	for _, l := range verdicts(s) {
		lv := levelJS{Load: l.Load, Judged: l.Verdict.Judged, Meets: l.Verdict.Meets}
		if l.Verdict.Gate {
			lv.Gate = l.Verdict.Why
		}
		if l.Run == nil {
			lv.Excluded = "failed: " + l.Error
			js.Levels = append(js.Levels, lv)
			continue
		}
		r := l.Run
		lv.Excluded = excluded(s, l.Load)
		lv.Stats = statsJS(r)
		lv.ReqPerS, lv.TokPerS, lv.Offered = r.Throughput.RequestsPerS, r.TokensPerS(), r.Arrivals.OfferedRate
		if r.Calls != nil {
			lv.ReqPerS, lv.Offered = r.Calls.TurnsPerS, r.Calls.TurnsOfferedPerS
		}
		if g := r.Goodput; g != nil {
			v := 100 * g.Share
			lv.Goodput = &v
		}
		if c := r.Cache; c != nil && c.Reported && r.Calls != nil {
			v := 100 * c.HitRate
			lv.CacheHit = &v
		}
		lv.Dist = distJS(r)
		lv.Slices = sliceData(r)
		if rp := r.Repeats; rp != nil && len(rp.Intervals) > 0 {
			lv.CI = map[string][2]float64{}
			for name, iv := range rp.Intervals {
				if name == "throughput" && r.Calls != nil {
					continue // the chart plots turns, not this figure's requests
				}
				lv.CI[name] = [2]float64{iv.Low, iv.High}
			}
		}
		js.Levels = append(js.Levels, lv)
	}
	return js
}

// verdicts are the sweep's levels, each with its verdict: as the file
// carries them, or, for a file from before verdicts, found as its knees
// were.
func verdicts(s *results.Sweep) []results.Level {
	if !slices.ContainsFunc(s.Levels, func(l results.Level) bool { return l.Verdict == nil }) {
		return s.Levels
	}
	c := *s
	c.Levels = slices.Clone(s.Levels)
	c.FindKnees()
	return c.Levels
}

// runData is a run as the charts take it: its distributions, and its
// timeline from records when given, else its rates.
func runData(r *results.Run, recs []results.RecordLine) runJS {
	js := runJS{Dist: distJS(r), Slices: sliceData(r)}
	for _, name := range classOrder(r) {
		c := r.Classes[name]
		js.ClassTTFT = append(js.ClassTTFT, barJS{name, c.Stats.TTFTSched.P95})
		if g := c.Goodput; g != nil {
			js.ClassGood = append(js.ClassGood, barJS{name, 100 * g.Share})
		}
	}
	if rp := r.Repeats; rp != nil {
		for _, e := range rp.Each {
			if sl := sliceData(&results.Run{SliceS: e.SliceS, Slices: e.Slices}); sl != nil {
				js.RepeatSlices = append(js.RepeatSlices, sl)
			}
		}
	}
	if tl := timeline(recs); tl != nil {
		js.Timeline = tl
		return js
	}
	a := r.Arrivals
	for _, b := range []barJS{{"target rate", a.TargetRate}, {"offered", a.OfferedRate}, {"sent at", a.AchievedRate},
		{"completions", r.Throughput.RequestsPerS}} {
		if b.Value > 0 {
			js.Rates = append(js.Rates, b)
		}
	}
	return js
}

// timelineBuckets bounds a timeline's points: buckets of a second, or
// wider for a window past two minutes.
const timelineBuckets = 120

// timeline counts a run's sends and completions per second and its
// requests in flight over the window, from its records.
func timeline(recs []results.RecordLine) *timelineJS {
	var lines []results.RecordLine
	for _, l := range recs {
		if !l.Warmup && l.SentUnixNs > 0 && l.DoneUnixNs >= l.SentUnixNs {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 {
		return nil
	}
	t0, t1 := lines[0].SentUnixNs, lines[0].DoneUnixNs
	for _, l := range lines {
		t0, t1 = min(t0, l.SentUnixNs), max(t1, l.DoneUnixNs)
	}
	span := float64(t1-t0) / 1e9
	if !(span > 0) {
		return nil
	}
	width := math.Max(span/timelineBuckets, 1)
	n := int(math.Ceil(span/width)) + 1
	tl := &timelineJS{T: make([]float64, n), Sent: make([]float64, n), Done: make([]float64, n), Inflight: make([]float64, n)}
	for i := range tl.T {
		tl.T[i] = math.Round(float64(i)*width*1000) / 1000
	}
	for _, l := range lines {
		s, d := float64(l.SentUnixNs-t0)/1e9, float64(l.DoneUnixNs-t0)/1e9
		tl.Sent[int(s/width)] += 1 / width
		tl.Done[int(d/width)] += 1 / width
		for b := int(s / width); b <= int(d/width) && b < n; b++ {
			tl.Inflight[b]++
		}
	}
	return tl
}

// planData is a plan as the charts take it.
func planData(p *results.Plan) *planJS {
	js := &planJS{Unit: "/s"}
	if p.Axis == "concurrency" {
		js.Unit = " streams"
	}
	models := map[string]bool{}
	for _, r := range p.Rows {
		models[r.Model] = true
	}
	for _, r := range p.Rows {
		// The GPUs per replica (from the row, as a calibrated
		// configuration is named by its models file, not its GPU); the
		// model only when the plan has several.
		what := r.GPU
		if r.TP > 1 {
			what += fmt.Sprintf("x%d", r.TP)
		}
		if what == "" || len(models) > 1 {
			what = r.Config
		}
		label := fmt.Sprintf("%d × %s", max(r.Replicas, 1), what)
		if rt := r.RoutingText(); rt != "-" {
			label += " · " + rt
		}
		js.Rows = append(js.Rows, planRowJS{Label: label, Meets: r.Meets, CostPerHour: r.CostPerHour, Headroom: r.Headroom})
	}
	if d := p.Day; d != nil && len(d.Policies) > 0 {
		js.Day = &dayJS{}
		for _, m := range d.Policies[0].Timeline {
			js.Day.Rate = append(js.Day.Rate, m.Rate)
		}
		for _, pol := range d.Policies {
			dp := dayPolicyJS{Name: pol.Name}
			for _, m := range pol.Timeline {
				dp.Replicas = append(dp.Replicas, m.Replicas+m.Loading)
				dp.Attainment = append(dp.Attainment, 100*m.Attainment)
			}
			js.Day.Policies = append(js.Day.Policies, dp)
		}
	}
	return js
}

// calData is a calibration as the charts take it: per metric and level,
// measured, start and fitted.
func calData(c *results.Calibration) *calJS {
	js := &calJS{}
	for _, l := range c.Levels {
		if l.Skipped != "" {
			continue
		}
		lv := calLevelJS{Load: l.Load, HeldOut: l.HeldOut, Values: map[string][3]float64{}}
		for _, m := range l.Metrics {
			lv.Values[m.Metric] = [3]float64{m.Measured, m.Start, m.Fitted}
			if !slices.Contains(js.Metrics, m.Metric) {
				js.Metrics = append(js.Metrics, m.Metric)
			}
		}
		js.Levels = append(js.Levels, lv)
	}
	return js
}

// sourceOf says whether a sweep's figures were predicted or measured.
func sourceOf(s *results.Sweep) string {
	if s.Config.Predicted {
		return "predicted"
	}
	return "measured"
}
