package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/kneebench/knee/results"
	"gonum.org/v1/plot/plotter"
)

// ComparePlot overlays several sweeps: their latency curves at the SLO
// percentile with each SLO threshold and each sweep's knees labelled, and
// their throughput. Excluded levels are hollow.
func ComparePlot(w io.Writer, sweeps []*results.Sweep) error {
	first := sweeps[0]
	lat := newPanel(first, "comparison — latency at the SLO percentile vs load", metricLabel(first))
	tp := newPanel(first, "throughput vs load", "achieved (per s)")
	var ticks levelTicks
	lo, hi := math.Inf(1), math.Inf(-1)
	seenTick := map[float64]bool{}
	for _, s := range sweeps {
		for _, l := range s.Levels {
			if !seenTick[l.Load] {
				seenTick[l.Load] = true
				ticks = append(ticks, l.Load)
			}
		}
	}
	thresholds := map[float64]bool{}
	for i, s := range sweeps {
		c := palette[i%len(palette)]
		in, out := series(s, percentile(latencyMetric(s), s.SLO.Percentile()))
		for _, q := range append(append(plotter.XYs{}, in...), out...) {
			lo, hi = math.Min(lo, q.Y), math.Max(hi, q.Y)
		}
		lat.curve(fmt.Sprintf("%s p%g", s.Label, s.SLO.Percentile()), in, out, c)
		if s.SLO.Metric() != "goodput" {
			thresholds[s.SLO.ThresholdMs()] = true
		}
		th, thx := series(s, throughputOf)
		tp.curve(s.Label, th, thx, c)
	}
	marked := slices.Sorted(maps.Keys(thresholds))
	for _, t := range marked {
		lo, hi = math.Min(lo, t), math.Max(hi, t)
	}
	bottom, top := lat.scaleY(lo, hi, marked...)
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, v := range ticks {
		minX, maxX = math.Min(minX, v), math.Max(maxX, v)
	}
	for _, t := range marked {
		l := line(plotter.XYs{{X: minX, Y: t}, {X: maxX, Y: t}}, colSLO, dashSLO)
		lat.p.Add(l)
		lat.legend.Add(fmt.Sprintf("SLO threshold %g ms", t), l)
	}
	for i, s := range sweeps {
		c := palette[i%len(palette)]
		if k := s.Knees.SLO; k != nil && !s.Knees.SLONotReached {
			lat.mark(fmt.Sprintf("%s SLO knee %g", s.Label, k.Load), k.Load, c, nil)
		}
		if k := s.Knees.Curvature; k != nil {
			lat.mark(fmt.Sprintf("%s curvature knee %g", s.Label, k.Load), k.Load, c, dashCurve)
		}
	}
	lat.drawMarks(bottom, top)
	lat.p.X.Tick.Marker, tp.p.X.Tick.Marker = ticks, ticks
	tp.p.Y.Min = 0
	return renderPanels(w, []*panel{lat, tp})
}
