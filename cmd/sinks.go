package cmd

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/report/otlpexport"
	"github.com/kneebench/knee/report/promexport"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload/kind"
	"github.com/spf13/cobra"
)

// sinkTarget is what a sink may need of the work's target when it opens.
type sinkTarget struct {
	ctx     context.Context
	kind    kind.Name
	model   string
	baseURL string
}

// sinkKind is one --export NAME=WHERE: WHERE checked before anything
// runs (check returns it as the sink opens it), and the sink opened once
// the target is known.
type sinkKind struct {
	check func(where string) (string, error)
	open  func(where string, t sinkTarget) (report.Sink, error)
}

// sinkKinds are --export's sinks by name (k6's outputs): a new one is an
// entry here and its own package.
var sinkKinds = map[string]sinkKind{
	"prometheus": {check: report.DashboardAddress, open: func(where string, _ sinkTarget) (report.Sink, error) { return promexport.Start(where) }},
	"otlp": {check: otlpexport.Endpoint, open: func(where string, t sinkTarget) (report.Sink, error) {
		return otlpexport.Start(t.ctx, where, otlpexport.DefaultInterval, otlpTarget(t))
	}},
}

// otlpTarget is the target as the GenAI conventions name it.
func otlpTarget(t sinkTarget) otlpexport.Target {
	out := otlpexport.Target{Operation: t.kind.Kind().Operation, Model: t.model}
	if u, err := url.Parse(t.baseURL); err == nil {
		out.Address = u.Hostname()
		out.Port, _ = strconv.Atoi(u.Port())
		if out.Port == 0 && out.Address != "" {
			out.Port = map[string]int{"http": 80, "https": 443}[u.Scheme]
		}
	}
	return out
}

// sinkFlags are where the figures go while the work runs: --export's
// sinks and --dashboard's live view, set up and fed in this one place.
type sinkFlags struct {
	exports []string
	dash    string
	names   []string
	// wanted are the checked --export sinks, name and where.
	wanted [][2]string
	sinks  report.Sinks
	view   *report.Dashboard
	// page is where the view's final page is written when the work ends
	// ("" where the work writes no file); out is where that is said.
	page string
	out  io.Writer
}

func (f *sinkFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringArrayVar(&f.exports, "export", nil, "publish the figures while the work runs (repeatable): prometheus=ADDR serves the level in progress and each finished level's percentiles, throughput, errors and verdict at http://ADDR/metrics for a Prometheus to scrape (PORT or HOST:PORT, loopback unless a host is given); otlp=URL pushes them, and every measured request into the GenAI conventions' gen_ai.client.* histograms, to an OTLP/HTTP receiver every 5 s (e.g. http://collector:4318; OTEL_EXPORTER_OTLP_HEADERS is sent)")
	fs.StringVar(&f.dash, "dashboard", "", "serve a live view at this address while the work runs (PORT, or HOST:PORT; "+
		"loopback unless a host is given): progress, recent TTFT and ITL, the client's health and the finished levels' curves; it becomes the report at the end")
	fs.StringArrayVar(&f.names, "dashboard-host", nil, "a host name the live view may also be reached by (it answers to its literal addresses and localhost; any other Host is refused, as a page elsewhere could read the run through its own name)")
}

// keepPage sets where the view's final page goes: beside output (a run's
// JSON or a sweep's), as NAME.html; it returns that file, for checking
// before anything is measured, or "" when no view is asked or output is
// none.
func (f *sinkFlags) keepPage(output string) string {
	if f.dash == "" || output == "" || results.IsStdout(output) {
		return ""
	}
	f.page = strings.TrimSuffix(output, filepath.Ext(output)) + ".html"
	return f.page
}

// check reads --export and --dashboard before anything is measured.
func (f *sinkFlags) check() error {
	for _, s := range f.exports {
		name, where, _ := strings.Cut(s, "=")
		k, ok := sinkKinds[name]
		if !ok {
			return usageErr("--export %q: want prometheus=ADDR or otlp=URL", s)
		}
		for _, w := range f.wanted {
			if w[0] == name {
				return usageErr("--export %s= given twice", name)
			}
		}
		checked, err := k.check(where)
		if err != nil {
			return usageErr("--export %s=%w", name, err)
		}
		f.wanted = append(f.wanted, [2]string{name, checked})
	}
	if f.dash != "" {
		addr, err := report.DashboardAddress(f.dash)
		if err != nil {
			return usageErr("--dashboard %w", err)
		}
		f.dash = addr
	}
	return nil
}

// open opens every sink once the target is known, before anything is
// measured, and says where each publishes.
func (f *sinkFlags) open(c *cobra.Command, t sinkTarget) error {
	errOut := c.ErrOrStderr()
	if f.dash != "" {
		d, err := report.StartDashboard(f.dash, version(), f.names...)
		if err != nil {
			return withCode(ExitRuntime, fmt.Errorf("--dashboard: %w", err))
		}
		f.view, f.out = d, c.OutOrStdout()
		f.sinks = append(f.sinks, d)
		where := "give --output (-o) to keep its final page"
		if f.page != "" {
			where = "its final page is written to " + f.page + " when the work ends"
		}
		fmt.Fprintf(errOut, "%s (%s)\n", d.Describe(), where)
	}
	for _, w := range f.wanted {
		s, err := sinkKinds[w[0]].open(w[1], t)
		if err != nil {
			return withCode(ExitRuntime, fmt.Errorf("--export %s=%s: %w", w[0], results.RedactURL(w[1]), err))
		}
		f.sinks = append(f.sinks, s)
		fmt.Fprintln(errOut, s.Describe())
	}
	return nil
}

// on says some sink wants the level's progress in detail.
func (f *sinkFlags) on() bool { return len(f.sinks) > 0 }

// observe is live.Live's Observe for the sinks that take every request,
// or nil: label names the work, and a level its load.
func (f *sinkFlags) observe(label string) func(*bench.Level, *record.Record) {
	each := f.sinks.Requests()
	if each == nil {
		return nil
	}
	return func(lv *bench.Level, r *record.Record) {
		streamed := r.FirstToken > 0 && r.Chunks > 0
		req := report.Request{Label: label, Load: lv.Load, Duration: r.Done - r.Sent, Streamed: streamed, Chunks: r.ChunkTimes,
			InputTokens: r.PromptTokens, OutputTokens: r.CompletionTokens, Failure: r.Class}
		if streamed {
			req.FirstChunk = r.FirstToken - r.Sent
		}
		each(req)
	}
}

// finish stops every sink, saying what did not go through, and writes
// the live view's final page.
func (f *sinkFlags) finish(c *cobra.Command) {
	for _, err := range f.sinks.Stop() {
		fmt.Fprintf(c.ErrOrStderr(), "knee: warning: %v\n", err)
	}
	if f.view != nil && f.page != "" {
		// A viewer who comes after the view has stopped reads it here.
		if page := f.view.Page(); page != nil {
			if err := results.WriteOutput(f.page, page); err != nil {
				fmt.Fprintf(f.out, "knee: the live view's final page: writing %s: %v\n", f.page, err)
			} else {
				fmt.Fprintf(f.out, "wrote %s (the live view's final page)\n", f.page)
			}
		}
	}
	f.sinks, f.view = nil, nil
}
