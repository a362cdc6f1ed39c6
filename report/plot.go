package report

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/kneebench/knee/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var (
	colP50   = color.RGBA{R: 0x4c, G: 0x9a, B: 0x2a, A: 0xff}
	colP95   = color.RGBA{R: 0x1f, G: 0x5f, B: 0xbf, A: 0xff}
	colP99   = color.RGBA{R: 0x8e, G: 0x2d, B: 0xc8, A: 0xff}
	colSLO   = color.RGBA{R: 0xd0, G: 0x30, B: 0x30, A: 0xff}
	colCurve = color.RGBA{R: 0xe0, G: 0x8a, B: 0x00, A: 0xff}
	colGrey  = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}
	palette  = []color.Color{colP95, colSLO, colP50, colP99, colCurve, color.RGBA{R: 0x10, G: 0x10, B: 0x10, A: 0xff}}
)

// axisLabel names the load axis of a sweep.
func axisLabel(s *results.Sweep) string {
	switch {
	case s.Axis == "concurrency":
		return "concurrency (streams)"
	case s.Workload == "voice":
		return "offered load (calls/s)"
	}
	return "offered load (requests/s)"
}

func metricLabel(s *results.Sweep) string {
	names := map[string]string{"ttft_sched": "TTFT from scheduled arrival", "ttft": "TTFT", "e2e": "E2E", "e2e_sched": "E2E from scheduled arrival", "itl": "ITL", "tpot": "TPOT", "queue_wait": "queue wait"}
	n := names[s.SLO.Metric]
	if n == "" {
		n = s.SLO.Metric
	}
	return n + " (ms)"
}

func line(xy plotter.XYs, c color.Color, dashed bool) *plotter.Line {
	l, _ := plotter.NewLine(xy)
	l.Color = c
	l.Width = vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return l
}

func points(xy plotter.XYs, c color.Color) *plotter.Scatter {
	s, _ := plotter.NewScatter(xy)
	s.Color = c
	s.Radius = vg.Points(2.5)
	return s
}

// series collects (load, value) for every measured level.
func series(s *results.Sweep, value func(*results.Run) (float64, bool)) plotter.XYs {
	var xy plotter.XYs
	for _, l := range s.Levels {
		if l.Run == nil {
			continue
		}
		if v, ok := value(l.Run); ok && !math.IsNaN(v) {
			xy = append(xy, plotter.XY{X: l.Load, Y: v})
		}
	}
	return xy
}

func percentile(metric string, p float64) func(*results.Run) (float64, bool) {
	return func(r *results.Run) (float64, bool) {
		sum, ok := r.Stats.SummaryOf(metric)
		if !ok || sum.Count == 0 {
			return 0, false
		}
		return sum.At(p), true
	}
}

// throughputOf is a level's achieved throughput: turns per second for
// calls, requests per second otherwise.
func throughputOf(r *results.Run) (float64, bool) {
	if r.Calls != nil {
		return r.Calls.TurnsPerS, true
	}
	return r.Throughput.RequestsPerS, true
}

// vline draws a vertical marker at x across [lo, hi].
func vline(x, lo, hi float64, c color.Color) *plotter.Line {
	return line(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}}, c, true)
}

// SweepPlot renders a sweep as a PNG: the latency percentiles against
// offered load with the SLO line and both knees, the cache-hit rate when
// the workload reports one, and throughput against offered load.
func SweepPlot(w io.Writer, s *results.Sweep) error {
	lat := plot.New()
	lat.Title.Text = fmt.Sprintf("%s — %s vs load", s.Label, metricLabel(s))
	lat.X.Label.Text = axisLabel(s)
	lat.Y.Label.Text = metricLabel(s)
	maxY := s.SLO.ThresholdMs * 1.2
	for _, p := range []struct {
		pct float64
		c   color.Color
	}{{50, colP50}, {95, colP95}, {99, colP99}} {
		xy := series(s, percentile(s.SLO.Metric, p.pct))
		if len(xy) == 0 {
			continue
		}
		for _, q := range xy {
			maxY = math.Max(maxY, q.Y)
		}
		l := line(xy, p.c, false)
		lat.Add(l, points(xy, p.c))
		lat.Legend.Add(fmt.Sprintf("p%g", p.pct), l)
	}
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, l := range s.Levels {
		minX, maxX = math.Min(minX, l.Load), math.Max(maxX, l.Load)
	}
	if !math.IsInf(minX, 0) {
		slo := line(plotter.XYs{{X: minX, Y: s.SLO.ThresholdMs}, {X: maxX, Y: s.SLO.ThresholdMs}}, colSLO, true)
		lat.Add(slo)
		lat.Legend.Add(fmt.Sprintf("SLO p%g ≤ %g ms", s.SLO.Percentile, s.SLO.ThresholdMs), slo)
	}
	if k := s.Knees.SLO; k != nil {
		m := vline(k.Load, 0, maxY, colSLO)
		lat.Add(m)
		lat.Legend.Add(fmt.Sprintf("SLO knee %g", k.Load), m)
	}
	if k := s.Knees.Curvature; k != nil {
		m := vline(k.Load, 0, maxY, colCurve)
		lat.Add(m)
		lat.Legend.Add(fmt.Sprintf("curvature knee %g", k.Load), m)
	}
	lat.Legend.Top, lat.Legend.Left = true, true
	lat.Y.Min = 0
	lat.Add(plotter.NewGrid())

	panels := []*plot.Plot{lat}
	hits := series(s, func(r *results.Run) (float64, bool) {
		if r.Cache == nil || !r.Cache.Reported {
			return 0, false
		}
		return 100 * r.Cache.HitRate, true
	})
	anyHit := false
	for _, q := range hits {
		anyHit = anyHit || q.Y > 0
	}
	if len(hits) > 0 && (anyHit || s.Workload == "voice") {
		cp := plot.New()
		cp.Title.Text = "prefix-cache hit rate of measured requests"
		if s.Workload == "voice" {
			cp.Title.Text = "prefix-cache hit rate of measured turns (2..T)"
		}
		cp.X.Label.Text = axisLabel(s)
		cp.Y.Label.Text = "cache hit rate (%)"
		cp.Y.Min, cp.Y.Max = 0, 100
		l := line(hits, colCurve, false)
		cp.Add(l, points(hits, colCurve), plotter.NewGrid())
		panels = append(panels, cp)
	}
	tp := plot.New()
	tp.Title.Text = "throughput vs offered load"
	tp.X.Label.Text = axisLabel(s)
	tp.Y.Label.Text = "achieved (per s)"
	achieved := series(s, throughputOf)
	if len(achieved) > 0 {
		l := line(achieved, colP95, false)
		tp.Add(l, points(achieved, colP95))
		tp.Legend.Add("achieved", l)
	}
	if s.Axis == "rate" && !math.IsInf(minX, 0) {
		per := 1.0
		if s.Workload == "voice" && s.Config.Voice != nil {
			per = float64(s.Config.Voice.Turns - 1)
		}
		ideal := line(plotter.XYs{{X: minX, Y: minX * per}, {X: maxX, Y: maxX * per}}, colGrey, true)
		tp.Add(ideal)
		tp.Legend.Add("keeping up", ideal)
	}
	if k := s.Knees.Saturation; k != nil {
		maxT := 0.0
		for _, q := range achieved {
			maxT = math.Max(maxT, q.Y)
		}
		m := vline(k.Load, 0, maxT*1.1+1, colSLO)
		tp.Add(m)
		tp.Legend.Add(fmt.Sprintf("saturation %g", k.Load), m)
	}
	tp.Legend.Top, tp.Legend.Left = true, true
	tp.Y.Min = 0
	tp.Add(plotter.NewGrid())
	panels = append(panels, tp)
	return renderPanels(w, panels)
}

// renderPanels stacks plots vertically into one PNG.
func renderPanels(w io.Writer, panels []*plot.Plot) error {
	width, height := 9*vg.Inch, vg.Length(len(panels))*3.6*vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))
	dc := draw.New(img)
	rows := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(rows, tiles, dc)
	for i := range panels {
		panels[i].Draw(canvases[i][0])
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// ComparePlot overlays several sweeps: their latency curves at the SLO
// percentile, and their throughput.
func ComparePlot(w io.Writer, sweeps []*results.Sweep) error {
	lat := plot.New()
	lat.Title.Text = "comparison — latency at the SLO percentile vs offered load"
	lat.X.Label.Text = axisLabel(sweeps[0])
	lat.Y.Label.Text = metricLabel(sweeps[0])
	tp := plot.New()
	tp.Title.Text = "throughput vs offered load"
	tp.X.Label.Text = axisLabel(sweeps[0])
	tp.Y.Label.Text = "achieved (per s)"
	for i, s := range sweeps {
		c := palette[i%len(palette)]
		xy := series(s, percentile(s.SLO.Metric, s.SLO.Percentile))
		if len(xy) > 0 {
			l := line(xy, c, false)
			lat.Add(l, points(xy, c))
			lat.Legend.Add(fmt.Sprintf("%s p%g", s.Label, s.SLO.Percentile), l)
		}
		if k := s.Knees.SLO; k != nil {
			if k.LatencyMs != nil {
				lat.Add(vline(k.Load, 0, *k.LatencyMs, c))
			}
		}
		th := series(s, throughputOf)
		if len(th) > 0 {
			l := line(th, c, false)
			tp.Add(l, points(th, c))
			tp.Legend.Add(s.Label, l)
		}
	}
	for _, p := range []*plot.Plot{lat, tp} {
		p.Legend.Top, p.Legend.Left = true, true
		p.Y.Min = 0
		p.Add(plotter.NewGrid())
	}
	return renderPanels(w, []*plot.Plot{lat, tp})
}
