package cmd

import (
	"fmt"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/report"
	"github.com/spf13/cobra"
)

// dashboardFlag is --dashboard: a live view of a run or sweep in the
// browser while it runs.
type dashboardFlag struct {
	addr  string
	names []string
	d     *report.Dashboard
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
	f.d = d
	fmt.Fprintf(c.ErrOrStderr(), "live view at %s\n", d.URL())
	return nil
}

// on says a live view is being served.
func (f *dashboardFlag) on() bool { return f.d != nil }

// status passes a level's progress on, when the view is on.
func (f *dashboardFlag) status(p bench.Progress, level string, done, levels int, window time.Duration, offered float64) {
	if f.d != nil {
		f.d.Status(report.LiveStatusOf(p, level, done, levels, window, offered))
	}
}

// finish turns the view into the report, gives its viewers a moment to
// take it, and stops serving.
func (f *dashboardFlag) finish() {
	f.d.Done(2 * time.Second)
	f.d.Close()
	f.d = nil
}
