package report

import (
	"image/color"
	"io"
	"math"
	"strings"

	"github.com/kneebench/knee/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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
	colSat   = color.RGBA{R: 0x30, G: 0x30, B: 0x30, A: 0xff}
	colGrey  = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}
	palette  = []color.Color{colP95, colSLO, colP50, colP99, colCurve, colSat}
)

// Line styles of the decision marks, so they can be told apart without
// colour: the SLO threshold dashed, the SLO knee solid, the curvature
// knee dotted, saturation dash-dotted.
var (
	dashSLO   = []vg.Length{vg.Points(6), vg.Points(3)}
	dashCurve = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	dashSat   = []vg.Length{vg.Points(7), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)}
)

// axisLabel names the load axis of a sweep: always the target the levels
// were asked at (the offered rate, drawn by the seeded schedule, is in the
// tables).
func axisLabel(s *results.Sweep) string {
	switch {
	case s.Axis == "concurrency":
		return "concurrency (streams)"
	case s.Workload == "voice":
		return "target rate (calls/s)"
	}
	return "target rate (requests/s)"
}

func metricLabel(s *results.Sweep) string {
	metric := s.SLO.Metric()
	if metric == results.GoodputMetric {
		// The curve of a goodput SLO is TTFT's (sweepCurve).
		metric = "ttft_sched"
	}
	if m, ok := results.MetricNamed(metric); ok {
		return strings.Replace(m.Title, " sched", " from scheduled arrival", 1) + " (" + m.Unit + ")"
	}
	return metric + " (ms)"
}

func line(xy plotter.XYs, c color.Color, dashes []vg.Length) *plotter.Line {
	l, _ := plotter.NewLine(xy)
	l.Color = c
	l.Width = vg.Points(1.5)
	l.Dashes = dashes
	return l
}

func points(xy plotter.XYs, c color.Color, hollow bool) *plotter.Scatter {
	s, _ := plotter.NewScatter(xy)
	s.Color = c
	s.Radius = vg.Points(2.5)
	s.Shape = draw.CircleGlyph{}
	if hollow {
		s.Shape, s.Radius = draw.RingGlyph{}, vg.Points(3.5)
	}
	return s
}

// excluded reports why a level takes no part in the knees ("" if it does).
func excluded(s *results.Sweep, load float64) string {
	for _, e := range s.Knees.Excluded {
		if e.Load == load {
			return e.Reason
		}
	}
	return ""
}

// series collects (load, value) for every measured level, split into the
// levels the knees use and those they leave out.
func series(s *results.Sweep, value func(*results.Run) (float64, bool)) (in, out plotter.XYs) {
	for _, l := range s.Levels {
		if l.Run == nil {
			continue
		}
		v, ok := value(l.Run)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if excluded(s, l.Load) != "" {
			out = append(out, plotter.XY{X: l.Load, Y: v})
		} else {
			in = append(in, plotter.XY{X: l.Load, Y: v})
		}
	}
	return in, out
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

// panel is one plot with its own legend, drawn beside it so it never
// covers data.
type panel struct {
	p      *plot.Plot
	legend plot.Legend
	marks  []mark
	// notes are lines printed under the plot, whole (the reasons levels
	// were left out).
	notes []string
}

// mark is a vertical decision line: a knee.
type mark struct {
	name   string
	x      float64
	c      color.Color
	dashes []vg.Length
}

func newPanel(s *results.Sweep, title, ylabel string) *panel {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = axisLabel(s)
	p.Y.Label.Text = ylabel
	var loads levelTicks
	for _, l := range s.Levels {
		loads = append(loads, l.Load)
	}
	p.X.Tick.Marker = loads
	p.Y.Tick.Marker = linearTicks{}
	p.Add(plotter.NewGrid())
	return &panel{p: p, legend: plot.NewLegend()}
}

// curve adds a measured series: the levels the knees use filled, the
// excluded ones hollow.
func (pn *panel) curve(name string, in, out plotter.XYs, c color.Color) {
	if len(in)+len(out) == 0 {
		return
	}
	// The line joins only the levels the knees use; excluded ones stand
	// apart, hollow.
	sortXY(in)
	l := line(in, c, nil)
	if len(in) > 0 {
		pn.p.Add(l, points(in, c, false))
	}
	if len(out) > 0 {
		pn.p.Add(points(out, c, true))
	}
	pn.legend.Add(name, l)
}

func sortXY(xy plotter.XYs) {
	for i := 1; i < len(xy); i++ {
		for j := i; j > 0 && xy[j].X < xy[j-1].X; j-- {
			xy[j], xy[j-1] = xy[j-1], xy[j]
		}
	}
}

// mark adds a vertical decision line at x; drawMarks draws them.
func (pn *panel) mark(name string, x float64, c color.Color, dashes []vg.Length) {
	pn.marks = append(pn.marks, mark{name, x, c, dashes})
}

// drawMarks draws the decision lines over [lo, hi]. Lines at the same
// load would cover each other: they are drawn once, in the first one's
// style, and named together in the legend.
func (pn *panel) drawMarks(lo, hi float64) {
	done := map[int]bool{}
	for i, m := range pn.marks {
		if done[i] {
			continue
		}
		l := line(plotter.XYs{{X: m.x, Y: lo}, {X: m.x, Y: hi}}, m.c, m.dashes)
		l.Width = vg.Points(2)
		pn.p.Add(l)
		pn.legend.Add(m.name, l)
		for j := i + 1; j < len(pn.marks); j++ {
			if pn.marks[j].x == m.x {
				done[j] = true
				// On a line of its own, so the strip never cuts it.
				pn.legend.Add("   = " + pn.marks[j].name + ", the same line")
			}
		}
	}
}

// scaleY sets the y axis for values in [lo, hi] (log past a decade, see
// logIfWide, with a labelled tick at each marked value) and returns the
// span a vertical mark should cover.
func (pn *panel) scaleY(lo, hi float64, marked ...float64) (bottom, top float64) {
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	if pn.logIfWide(lo, hi, marked) {
		return math.Max(lo/1.5, 1e-9), hi * 1.5
	}
	return 0, hi * 1.1
}

// logIfWide puts the y axis on a log scale when the values span more than
// a decade, so the flat part of a curve stays readable next to its knee.
func (pn *panel) logIfWide(lo, hi float64, marked []float64) bool {
	if lo <= 0 || hi/lo <= 10 {
		pn.p.Y.Min = 0
		return false
	}
	pn.p.Y.Scale = plot.LogScale{}
	pn.p.Y.Tick.Marker = logTicks{marked: marked}
	pn.p.Y.Min, pn.p.Y.Max = lo/1.5, hi*1.5
	pn.p.Y.Label.Text += ", log scale"
	return true
}

// latencyMetric is the latency the first panel shows: the SLO metric, or
// TTFT from the schedule for a goodput SLO.
func latencyMetric(s *results.Sweep) string {
	if s.SLO.Metric() == "goodput" {
		return "ttft_sched"
	}
	return s.SLO.Metric()
}

// legendWidth is the strip right of each plot that holds its legend.
const legendWidth = 2.6 * vg.Inch

// Notes under the charts: their size, line height and the runes a line
// holds across the page.
const (
	noteSize  = 9
	noteLine  = 13
	noteRunes = 150
)

// renderPanels stacks the panels vertically into one PNG, each with its
// legend in a strip to its right, and the panels' notes under them all,
// wrapped, never cut.
func renderPanels(w io.Writer, panels []*panel) error {
	var notes []string
	for _, p := range panels {
		for _, n := range p.notes {
			notes = append(notes, wrap(n, noteRunes)...)
		}
	}
	notesHeight := vg.Length(0)
	if len(notes) > 0 {
		notesHeight = vg.Length(len(notes))*vg.Points(noteLine) + 4*vg.Millimeter
	}
	width, height := 11*vg.Inch, vg.Length(len(panels))*3.4*vg.Inch+notesHeight
	img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))
	dc := draw.New(img)
	rows := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		rows[i] = []*plot.Plot{p.p}
	}
	plots := draw.Crop(dc, 0, -legendWidth, notesHeight, 0)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(rows, tiles, plots)
	for i, pn := range panels {
		pn.p.Draw(canvases[i][0])
		c := canvases[i][0]
		strip := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c.Max.X + 2*vg.Millimeter, Y: c.Min.Y},
			Max: vg.Point{X: width - vg.Millimeter, Y: c.Max.Y - 6*vg.Millimeter}}}
		pn.legend.Top, pn.legend.Left = true, true
		pn.legend.TextStyle.Font.Size = vg.Points(9)
		pn.legend.Draw(strip)
	}
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(noteSize)), Handler: plot.DefaultTextHandler}
	for i, n := range notes {
		dc.FillText(sty, vg.Point{X: 6 * vg.Millimeter, Y: notesHeight - 2*vg.Millimeter - vg.Length(i+1)*vg.Points(noteLine)}, n)
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// wrap breaks s at spaces into lines of at most n runes, indenting the
// lines after the first.
func wrap(s string, n int) []string {
	var lines []string
	r := []rune(s)
	for len(r) > n {
		cut := n
		for cut > n/2 && r[cut] != ' ' {
			cut--
		}
		lines = append(lines, string(r[:cut]))
		r = append([]rune("    "), []rune(strings.TrimLeft(string(r[cut:]), " "))...)
	}
	return append(lines, string(r))
}
