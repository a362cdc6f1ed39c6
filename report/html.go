package report

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/kneebench/knee/results"
)

//go:embed html.tmpl
var htmlTemplate string

var pageTemplate = template.Must(template.New("page").Parse(htmlTemplate))

// HTMLInput is what one report page shows: runs, sweeps, or both, and the
// knee version that wrote it.
type HTMLInput struct {
	Runs    []*results.Run
	Sweeps  []*results.Sweep
	Version string
	// NoImages leaves the plots out (for tests of the page's structure).
	NoImages bool
}

type htmlPage struct {
	Title, Subtitle, Version string
	Warnings                 []string
	Compare                  *htmlTable
	CompareImage             template.URL
	Sweeps                   []htmlSweep
	Runs                     []htmlRun
}

type htmlTable struct {
	Header []string
	Rows   []htmlRow
}

type htmlRow struct {
	Class string
	Cells []string
}

type fact struct{ Name, Value string }

type htmlSweep struct {
	Label    string
	Facts    []fact
	Knees    []string
	Image    template.URL
	Levels   *htmlTable
	Warnings []string
}

type htmlRun struct {
	ID, Heading, Health, ServerTitle string
	Limited                          bool
	Facts                            []fact
	Latency, Server                  *htmlTable
	Notes, Warnings                  []string
}

// HTML writes one self-contained page — styles inline, plots embedded as
// data, no script and nothing fetched when it is viewed — with the header
// facts, plots, tables, knees, server view, client health and warnings of
// every run and sweep given.
func HTML(w io.Writer, in HTMLInput) error {
	p := htmlPage{Version: in.Version}
	switch {
	case len(in.Sweeps) > 1:
		p.Title = fmt.Sprintf("knee — %d sweeps compared", len(in.Sweeps))
	case len(in.Sweeps) == 1:
		p.Title = "knee — sweep " + in.Sweeps[0].Label
	case len(in.Runs) == 1:
		p.Title = "knee — run of " + in.Runs[0].Config.Model
	default:
		p.Title = fmt.Sprintf("knee — %d runs", len(in.Runs))
	}
	p.Subtitle = "Latencies in ms; TTFT sched and E2E sched count from the scheduled arrival. Written by knee " + in.Version + "."
	if len(in.Sweeps) > 1 {
		p.Compare = compareTable(in.Sweeps)
		p.Warnings = CompareWarnings(in.Sweeps)
		if !in.NoImages {
			var png bytes.Buffer
			if err := ComparePlot(&png, in.Sweeps); err == nil {
				p.CompareImage = dataURL(png.Bytes())
			}
		}
	}
	for _, s := range in.Sweeps {
		hs, err := sweepSection(s, in.NoImages)
		if err != nil {
			return err
		}
		p.Sweeps = append(p.Sweeps, hs)
	}
	for i, r := range in.Runs {
		p.Runs = append(p.Runs, runSection(r, i))
	}
	return pageTemplate.Execute(w, p)
}

func dataURL(png []byte) template.URL {
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
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

func sweepSection(s *results.Sweep, noImages bool) (htmlSweep, error) {
	hs := htmlSweep{Label: s.Label}
	c := s.Config
	hs.Facts = []fact{
		{"target", c.BaseURL}, {"model", c.Model}, {"workload", s.Workload + " · " + sizesOf(c)},
		{"axis", s.Axis}, {"SLO", sloText(s.SLO) + fmt.Sprintf(", errors under %g%%", 100*s.SLO.MaxErrorRate)},
		{"started", s.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")}, {"levels", fmt.Sprint(len(s.Levels))},
	}
	var kb bytes.Buffer
	Knees(&kb, s)
	for _, line := range strings.Split(strings.TrimSpace(kb.String()), "\n") {
		if strings.HasPrefix(line, " ") && len(hs.Knees) > 0 {
			hs.Knees[len(hs.Knees)-1] += " " + strings.TrimSpace(line)
			continue
		}
		hs.Knees = append(hs.Knees, strings.Join(strings.Fields(line), " "))
	}
	if !noImages {
		var png bytes.Buffer
		if err := SweepPlot(&png, s); err != nil {
			return hs, err
		}
		hs.Image = dataURL(png.Bytes())
	}
	hs.Levels = &htmlTable{Header: []string{s.Axis, "offered", "n", "TTFT sched p50", "p95", "p99", "ITL p50", "throughput/s", "output tok/s", "errors", "cut", "good", "client"}}
	for _, l := range s.Levels {
		if l.Run == nil {
			hs.Levels.Rows = append(hs.Levels.Rows, htmlRow{Class: "excluded", Cells: []string{fmt.Sprintf("%g", l.Load), "failed: " + l.Error}})
			continue
		}
		r := l.Run
		q := func(sum results.Summary, v float64) string {
			if sum.Count == 0 {
				return "-"
			}
			return ms(v)
		}
		tput := r.Throughput.RequestsPerS
		if r.Calls != nil {
			tput = r.Calls.TurnsPerS
		}
		good := "-"
		if r.Goodput != nil {
			good = pct(r.Goodput.Share)
		}
		cut := "-"
		if c, u := r.Missing(); c+u > 0 {
			cut = fmt.Sprintf("%s (%d cut, %d unsent)", pct(r.MissingShare()), c, u)
		}
		row := htmlRow{Cells: []string{fmt.Sprintf("%g", l.Load), num(r.Arrivals.OfferedRate, 2), num(float64(r.Requests.OK+r.Requests.Failed), 0),
			q(r.Stats.TTFTSched, r.Stats.TTFTSched.P50), q(r.Stats.TTFTSched, r.Stats.TTFTSched.P95), q(r.Stats.TTFTSched, r.Stats.TTFTSched.P99),
			q(r.Stats.ITL, r.Stats.ITL.P50), num(tput, 2), num(r.Throughput.OutputTokensPerS, 0), pct(r.Requests.ErrorRate()), cut, good, r.Health.Verdict}}
		if why := excluded(s, l.Load); why != "" {
			row.Class = "excluded"
			row.Cells[len(row.Cells)-1] += " — left out of the knees: " + why
		}
		hs.Levels.Rows = append(hs.Levels.Rows, row)
		for _, w := range r.Warnings {
			hs.Warnings = append(hs.Warnings, fmt.Sprintf("level %g: %s", l.Load, w))
		}
	}
	return hs, nil
}

func sizesOf(c results.Config) string {
	switch {
	case c.Voice != nil:
		return fmt.Sprintf("%d-token system prompt, %d output tokens, %d turns", c.Voice.SystemPromptTokens, c.Voice.OutputTokens, c.Voice.Turns)
	case c.Dataset != "":
		return "dataset " + c.Dataset
	case c.InputTokens > 0:
		prefix := ""
		if c.PrefixTokens > 0 {
			prefix = fmt.Sprintf(" after one of %d shared %d-token prefixes", c.PrefixPool, c.PrefixTokens)
		}
		return fmt.Sprintf("%s input tokens%s, max_tokens %d", spread(c.InputTokens, c.InputStddev, c.RangeRatio), prefix, c.MaxTokens)
	}
	return fmt.Sprintf("max_tokens %d", c.MaxTokens)
}

func runSection(r *results.Run, i int) htmlRun {
	c := r.Config
	hr := htmlRun{ID: fmt.Sprint(i + 1), Heading: fmt.Sprintf("Run %d — %s", i+1, c.Model)}
	rq, tp, a := r.Requests, r.Throughput, r.Arrivals
	hr.Facts = []fact{
		{"target", c.BaseURL}, {"model", c.Model + " · " + c.Endpoint + " endpoint"}, {"workload", describeLoad(c)},
		{"started", r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")}, {"window", fmt.Sprintf("%.2f s", r.WindowSeconds)},
		{"requests", fmt.Sprintf("%d ok · %d failed · %d interrupted · %d warm-up", rq.OK, rq.Failed, rq.Interrupted, rq.Warmup)},
		{"throughput", fmt.Sprintf("%s req/s · %s output tok/s", num(tp.RequestsPerS, 2), num(tp.OutputTokensPerS, 1))},
	}
	if c.Mode == results.ModeOpen {
		hr.Facts = append(hr.Facts, fact{"arrivals", fmt.Sprintf("target %s/s · offered %s/s · achieved %s/s · %d unsent", num(a.TargetRate, 2), num(a.OfferedRate, 2), num(a.AchievedRate, 2), a.Unsent)})
	}
	if len(rq.Errors) > 0 {
		hr.Facts = append(hr.Facts, fact{"errors", formatCounts(rq.Errors)})
	}
	if g := r.Goodput; g != nil {
		hr.Facts = append(hr.Facts, fact{"goodput", fmt.Sprintf("%s of %d met %s · %s good req/s", pct(g.Share), g.Finished, boundsText(g.Bounds), num(g.RequestsPerS, 2))})
	}
	if ca := r.Cache; ca != nil && ca.Reported {
		hr.Facts = append(hr.Facts, fact{"cache hit rate", pct(ca.HitRate)})
	}
	h := r.Health
	hr.Limited = h.Verdict == results.VerdictClientLimited
	hr.Health = fmt.Sprintf("%s · timer lag p99 %s ms · CPU %.0f%% · GC %d", h.Verdict, ms(h.TimerLagP99Ms), h.CPUPercent, h.NumGC)
	if len(h.Reasons) > 0 {
		hr.Health += " — " + strings.Join(h.Reasons, "; ")
	}
	if hr.Limited {
		hr.Health += ". The client, not the server, limited these figures."
	}
	hr.Latency = &htmlTable{Header: []string{"", "mean", "min", "p50", "p90", "p95", "p99", "max", "n"}}
	for _, row := range []struct {
		name string
		s    results.Summary
	}{{"TTFT", r.Stats.TTFT}, {"TTFT sched", r.Stats.TTFTSched}, {"ITL", r.Stats.ITL}, {"TPOT", r.Stats.TPOT},
		{"E2E", r.Stats.E2E}, {"E2E sched", r.Stats.E2ESched}, {"queue wait", r.Stats.QueueWait}} {
		s := row.s
		if s.Count == 0 {
			hr.Latency.Rows = append(hr.Latency.Rows, htmlRow{Cells: []string{row.name, "-", "-", "-", "-", "-", "-", "-", "0"}})
			continue
		}
		hr.Latency.Rows = append(hr.Latency.Rows, htmlRow{Cells: []string{row.name, ms(s.Mean), ms(s.Min), ms(s.P50), ms(s.P90), ms(s.P95), ms(s.P99), ms(s.Max), num(float64(s.Count), 0)}})
	}
	if sv := r.Server; sv != nil {
		hr.ServerTitle = fmt.Sprintf("%s · %d requests · %s prompt and %s output tokens", sv.Source, sv.Requests, num(float64(sv.PromptTokens), 0), num(float64(sv.OutputTokens), 0))
		hr.Server = &htmlTable{Header: []string{"", "client", "server", "delivery"}}
		cell := func(v *float64) string {
			if v == nil {
				return "-"
			}
			return ms(*v)
		}
		for _, f := range sv.Figures {
			server := cell(f.Server)
			if f.Estimate {
				server = bucketCell(f)
			}
			hr.Server.Rows = append(hr.Server.Rows, htmlRow{Cells: []string{f.Name, cell(f.Client), server, cell(f.Delivery)}})
		}
		hr.Warnings = append(hr.Warnings, sv.AllWarnings()...)
	}
	hr.Notes = r.Notes
	hr.Warnings = append(hr.Warnings, r.Warnings...)
	return hr
}
