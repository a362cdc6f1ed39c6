package cmd

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/kneebench/knee/bench/live"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// dashboardFlag is --dashboard: a live view of a run or sweep in the
// browser while it runs.
type dashboardFlag struct {
	addr  string
	names []string
	d     *report.Dashboard
	// page is where the view's final page is written when the work ends
	// (beside the work's own outputs; "" where it has none); out is where
	// that is said.
	page string
	out  io.Writer
}

// keepPage sets where the final page goes: beside output (a run's JSON or
// a sweep's), as NAME.html; it returns that file, for checking before
// anything is measured, or "" when no view is asked or output is none.
func (f *dashboardFlag) keepPage(output string) string {
	if f.addr == "" || output == "" || results.IsStdout(output) {
		return ""
	}
	f.page = strings.TrimSuffix(output, filepath.Ext(output)) + ".html"
	return f.page
}

func (f *dashboardFlag) register(c *cobra.Command) {
	c.Flags().StringVar(&f.addr, "dashboard", "", "serve a live view at this address while the work runs (PORT, or HOST:PORT; "+
		"loopback unless a host is given): progress, recent TTFT and ITL, the client's health and the finished levels' curves; it becomes the report at the end")
	c.Flags().StringArrayVar(&f.names, "dashboard-host", nil, "a host name the live view may also be reached by (it answers to its literal addresses and localhost; any other Host is refused, as a page elsewhere could read the run through its own name)")
}

// start listens, before anything is measured, and says where to look.
func (f *dashboardFlag) start(c *cobra.Command) error {
	if f.addr == "" {
		return nil
	}
	addr, err := report.DashboardAddress(f.addr)
	if err != nil {
		return usageErr("--dashboard %w", err)
	}
	d, err := report.StartDashboard(addr, version(), f.names...)
	if err != nil {
		return withCode(ExitRuntime, fmt.Errorf("--dashboard: %w", err))
	}
	f.d, f.out = d, c.OutOrStdout()
	where := "give --output (-o) to keep its final page"
	if f.page != "" {
		where = "its final page is written to " + f.page + " when the work ends"
	}
	fmt.Fprintf(c.ErrOrStderr(), "live view at %s (%s)\n", d.URL(), where)
	return nil
}

// on says a live view is being served.
func (f *dashboardFlag) on() bool { return f.d != nil }

// status passes a level's progress on, when the view is on.
func (f *dashboardFlag) status(p live.Progress, level string, done, levels int, window time.Duration, offered float64) {
	if f.d != nil {
		f.d.Status(report.LiveStatusOf(p, level, done, levels, window, offered))
	}
}

// finish turns the view into the report, gives its viewers a moment to
// take it, and stops serving.
func (f *dashboardFlag) finish() {
	f.d.Done(2 * time.Second)
	f.d.Close()
	if page := f.d.Page(); f.page != "" && page != nil {
		// A viewer who comes after the view has stopped reads it here.
		if err := results.WriteOutput(f.page, page); err != nil {
			fmt.Fprintf(f.out, "knee: the live view's final page: writing %s: %v\n", f.page, err)
		} else {
			fmt.Fprintf(f.out, "wrote %s (the live view's final page)\n", f.page)
		}
	}
	f.d = nil
}
