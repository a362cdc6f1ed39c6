package report

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/kneebench/knee/results"
	"gonum.org/v1/plot/plotter"
)

// SweepPlot renders a sweep as a PNG: latency at the SLO percentile (with
// p50 and p99) against the target load with the SLO threshold and the
// three knees; ITL and TPOT; throughput in requests (or turns) and output
// tokens per second; and the cache-hit rate when the workload reports one.
// Levels the knees leave out are drawn hollow and their reasons listed.
func SweepPlot(w io.Writer, s *results.Sweep) error {
	lat := latencyPanel(s)
	panels := []*panel{lat}
	if tok, ok := tokenGapPanel(s); ok {
		panels = append(panels, tok)
	}
	panels = append(panels, throughputPanel(s))
	what := s.Config.Tokens()
	tokens := newPanel(s, what+" tokens per second", "tokens/s")
	tin, tout := series(s, func(r *results.Run) (float64, bool) { return r.TokensPerS(), true })
	tokens.curve(what+" tokens/s", tin, tout, colP50)
	tokens.p.Y.Min = 0
	panels = append(panels, tokens)
	if cp, ok := cachePanel(s); ok {
		panels = append(panels, cp)
	}
	// The reasons go under the first chart, whole.
	for _, e := range s.Knees.Excluded {
		lat.notes = append(lat.notes, fmt.Sprintf("○ %s left out of the knees: %s", loadOf(e.Load, axisUnit(s)), e.Reason))
	}
	return renderPanels(w, panels)
}

// loadRange is the sweep's lightest and heaviest level (±Inf when it has
// none).
func loadRange(s *results.Sweep) (float64, float64) {
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, l := range s.Levels {
		minX, maxX = math.Min(minX, l.Load), math.Max(maxX, l.Load)
	}
	return minX, maxX
}

// latencyPanel is the SLO's latency at p50, p95 and p99 against load,
// with the threshold and the knees.
func latencyPanel(s *results.Sweep) *panel {
	lat := newPanel(s, fmt.Sprintf("%s — %s vs load", s.Label, metricLabel(s)), metricLabel(s))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range []struct {
		pct float64
		c   color.Color
	}{{50, colP50}, {95, colP95}, {99, colP99}} {
		in, out := series(s, percentile(latencyMetric(s), p.pct))
		for _, q := range append(append(plotter.XYs{}, in...), out...) {
			lo, hi = math.Min(lo, q.Y), math.Max(hi, q.Y)
		}
		lat.curve(fmt.Sprintf("p%g", p.pct), in, out, p.c)
	}
	minX, maxX := loadRange(s)
	var slo []float64
	if s.SLO.Metric() != "goodput" && s.SLO.ThresholdMs() > 0 {
		lo, hi = math.Min(lo, s.SLO.ThresholdMs()), math.Max(hi, s.SLO.ThresholdMs())
		slo = append(slo, s.SLO.ThresholdMs())
	}
	bottom, top := lat.scaleY(lo, hi, slo...)
	if s.SLO.Metric() != "goodput" && !math.IsInf(minX, 0) {
		t := line(plotter.XYs{{X: minX, Y: s.SLO.ThresholdMs()}, {X: maxX, Y: s.SLO.ThresholdMs()}}, colSLO, dashSLO)
		lat.p.Add(t)
		lat.legend.Add(fmt.Sprintf("SLO threshold p%g ≤ %g ms", s.SLO.Percentile(), s.SLO.ThresholdMs()), t)
	}
	if k := s.Knees.SLO; k != nil && !s.Knees.SLONotReached {
		lat.mark(fmt.Sprintf("SLO knee %g", k.Load), k.Load, colSLO, nil)
	}
	if k := s.Knees.Curvature; k != nil {
		lat.mark(fmt.Sprintf("curvature knee %g", k.Load), k.Load, colCurve, dashCurve)
	}
	if k := s.Knees.Saturation; k != nil {
		lat.mark(fmt.Sprintf("saturation %g", k.Load), k.Load, colSat, dashSat)
	}
	lat.drawMarks(bottom, top)
	return lat
}

// tokenGapPanel is the time between tokens against load; false when no
// level streamed tokens.
func tokenGapPanel(s *results.Sweep) (*panel, bool) {
	tok := newPanel(s, "time between tokens", "ms")
	itl50, itl50x := series(s, percentile("itl", 50))
	itl95, itl95x := series(s, percentile("itl", 95))
	tpot, tpotx := series(s, percentile("tpot", 50))
	tok.curve("ITL p50", itl50, itl50x, colP50)
	tok.curve("ITL p95", itl95, itl95x, colP95)
	tok.curve("TPOT p50", tpot, tpotx, colP99)
	tok.p.Y.Min = 0
	return tok, len(itl50)+len(itl50x) > 0
}

// throughputPanel is what the server completed against load, with the
// target's line on a rate axis.
func throughputPanel(s *results.Sweep) *panel {
	tp := newPanel(s, "throughput vs load", "per second")
	in, out := series(s, throughputOf)
	unit := "requests/s"
	if s.Workload == "voice" {
		unit = "turns/s"
	}
	tp.curve("achieved "+unit, in, out, colP95)
	if minX, maxX := loadRange(s); s.Axis == "rate" && !math.IsInf(minX, 0) {
		per := 1.0
		if s.Workload == "voice" && s.Config.Voice != nil {
			per = float64(s.Config.Voice.Turns - 1)
		}
		ideal := line(plotter.XYs{{X: minX, Y: minX * per}, {X: maxX, Y: maxX * per}}, colGrey, dashSLO)
		tp.p.Add(ideal)
		tp.legend.Add("keeping up with the target", ideal)
	}
	maxT := 0.0
	for _, q := range append(in, out...) {
		maxT = math.Max(maxT, q.Y)
	}
	if k := s.Knees.Saturation; k != nil {
		tp.mark(fmt.Sprintf("saturation %g", k.Load), k.Load, colSat, dashSat)
	}
	tp.drawMarks(0, maxT*1.1+1)
	tp.p.Y.Min = 0
	return tp
}

// cachePanel is the prefix-cache hit rate against load; false when the
// server reports none (or none above zero, outside calls).
func cachePanel(s *results.Sweep) (*panel, bool) {
	hin, hout := series(s, func(r *results.Run) (float64, bool) {
		if r.Cache == nil || !r.Cache.Reported {
			return 0, false
		}
		return 100 * r.Cache.HitRate, true
	})
	anyHit := false
	for _, q := range append(hin, hout...) {
		anyHit = anyHit || q.Y > 0
	}
	if len(hin)+len(hout) == 0 || (!anyHit && s.Workload != "voice") {
		return nil, false
	}
	title := "prefix-cache hit rate of measured requests"
	if s.Workload == "voice" {
		title = "prefix-cache hit rate of measured turns (2..T)"
	}
	cp := newPanel(s, title, "cache hit rate (%)")
	cp.curve("hit rate", hin, hout, colCurve)
	cp.p.Y.Min, cp.p.Y.Max = 0, 100
	return cp, true
}
