package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/kneebench/knee/results"
)

//go:embed html.tmpl
var htmlTemplate string

//go:embed page.js
var pageScript string

//go:embed page.css
var pageStyle string

var pageTemplate = template.Must(template.New("page").Parse(htmlTemplate))

// HTMLInput is what one report page shows: runs (with their records when
// given, for a timeline), sweeps (one, or several compared), a plan or a
// calibration, and the knee version that wrote it.
type HTMLInput struct {
	Runs         []*results.Run
	Records      map[int][]results.RecordLine
	Sweeps       []*results.Sweep
	Plans        []*results.Plan
	Calibrations []*results.Calibration
	Version      string
	// Dashboard, when set, makes the page a live view following these
	// server-sent events (knee run|sweep --dashboard).
	Dashboard string
	// LiveHistory is the progress so far, which the live view draws over
	// time and extends from the events.
	LiveHistory []LiveStatus
	// Gate, with two sweeps, is knee compare --gate's verdict on them.
	Gate *GatePage
}

type htmlPage struct {
	Title, Subtitle, Version string
	Warnings                 []string
	Compare                  *htmlTable
	Gate                     *htmlGate
	Sweeps                   []htmlSweep
	Runs                     []htmlRun
	Plans                    []htmlPlan
	Calibrations             []htmlCalibration
	Live                     bool
	Data                     template.JS
	Script                   template.JS
	Style                    template.CSS
}

type htmlTable struct {
	Header []string
	Rows   []htmlRow
}

type htmlRow struct {
	Class string
	Cells []string
	// Titles are cells' details, shown on hover, by cell.
	Titles map[int]string
	// Note, when set, is a full-width line under the row (an excluded
	// level's reason, wrapped rather than cut).
	Note string
}

// Title is cell i's detail ("" when it has none).
func (r htmlRow) Title(i int) string { return r.Titles[i] }

type fact struct{ Name, Value string }

// HTML writes one self-contained page: styles, script and data inline,
// charts drawn in the page as SVG, nothing fetched when it is viewed (its
// content security policy forbids it), readable from 800 px up, light or
// dark as the viewer prefers, and printable.
func HTML(w io.Writer, in HTMLInput) error {
	p := htmlPage{Version: in.Version, Script: template.JS(pageScript), Style: template.CSS(pageStyle), Live: in.Dashboard != ""}
	var data pageData
	switch {
	case len(in.Plans) > 0:
		p.Title = "knee — capacity plan"
	case len(in.Calibrations) > 0:
		p.Title = "knee — calibration of " + in.Calibrations[0].Origin
	case len(in.Sweeps) > 1:
		p.Title = fmt.Sprintf("knee — %d sweeps compared", len(in.Sweeps))
	case len(in.Sweeps) == 1 && in.Sweeps[0].Prediction != nil:
		p.Title = "knee — predicted sweep " + in.Sweeps[0].Label
	case len(in.Sweeps) == 1:
		p.Title = "knee — sweep " + in.Sweeps[0].Label
	case len(in.Runs) == 1:
		p.Title = "knee — run of " + in.Runs[0].Config.Model
	case len(in.Runs) > 1:
		p.Title = fmt.Sprintf("knee — %d runs", len(in.Runs))
	default:
		p.Title = "knee — waiting for the first level"
	}
	if p.Live {
		p.Title = "knee — live: " + strings.TrimPrefix(p.Title, "knee — ")
		data.Dashboard = &dashboard{Events: in.Dashboard, History: in.LiveHistory}
	}
	p.Subtitle = "Latencies in ms; TTFT sched and E2E sched count from the scheduled arrival. Written by knee " + in.Version + "."
	if len(in.Sweeps) > 1 {
		p.Compare = compareTable(in.Sweeps)
		if in.Gate != nil {
			p.Gate = gateSection(in.Gate)
		}
		p.Warnings = CompareWarnings(in.Sweeps)
		data.Compare = true
	}
	for i, s := range in.Sweeps {
		p.Sweeps = append(p.Sweeps, sweepSection(s, i))
		data.Sweeps = append(data.Sweeps, sweepData(s))
	}
	for i, r := range in.Runs {
		p.Runs = append(p.Runs, runSection(r, i))
		data.Runs = append(data.Runs, runData(r, in.Records[i]))
	}
	for _, pl := range in.Plans {
		p.Plans = append(p.Plans, planSection(pl))
		data.Plan = planData(pl)
	}
	for _, c := range in.Calibrations {
		p.Calibrations = append(p.Calibrations, calibrationSection(c))
		data.Calibration = calData(c)
	}
	js, err := json.Marshal(data)
	if err != nil {
		return err
	}
	// encoding/json writes <, > and & as escapes, so nothing in the data
	// can end its script element early.
	p.Data = template.JS(js)
	return pageTemplate.Execute(w, p)
}

func compareTable(sweeps []*results.Sweep) *htmlTable {
	t := &htmlTable{Header: []string{""}}
	for _, s := range sweeps {
		t.Header = append(t.Header, s.Label)
	}
	knee := func(k *results.Knee) string {
		if k == nil {
			return "none"
		}
		return fmt.Sprintf("%g", k.Load)
	}
	rows := []struct {
		name string
		cell func(*results.Sweep) string
	}{
		{"figures", sourceOf},
		{"workload", func(s *results.Sweep) string { return s.Workload }},
		{"model", func(s *results.Sweep) string { return s.Config.Model }},
		{"SLO", func(s *results.Sweep) string { return sloText(s.SLO) }},
		{"SLO knee", sloKneeCell},
		{"curvature knee", func(s *results.Sweep) string { return knee(s.Knees.Curvature) }},
		{"saturation", func(s *results.Sweep) string { return knee(s.Knees.Saturation) }},
	}
	for _, r := range rows {
		row := htmlRow{Cells: []string{r.name}}
		for _, s := range sweeps {
			row.Cells = append(row.Cells, r.cell(s))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
