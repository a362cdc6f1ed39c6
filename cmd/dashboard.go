package cmd

import (
	"fmt"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// dashboardFlag is --dashboard: a live view of a run or sweep in the
// browser while it runs.
type dashboardFlag struct {
	addr string
	d    *report.Dashboard
}

func (f *dashboardFlag) register(c *cobra.Command) {
	c.Flags().StringVar(&f.addr, "dashboard", "", "serve a live view at this address while the work runs (PORT, or HOST:PORT; "+
		"loopback unless a host is given): progress, recent TTFT and ITL, the client's health and the finished levels' curves; it becomes the report at the end")
}

// start listens, before anything is measured, and says where to look.
func (f *dashboardFlag) start(c *cobra.Command) error {
	if f.addr == "" {
		return nil
	}
	addr, err := report.DashboardAddress(f.addr)
	if err != nil {
		return usageErr("--dashboard %v", err)
	}
	d, err := report.StartDashboard(addr, version())
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
	if f.d == nil {
		return
	}
	s := report.LiveStatus{Level: level, ElapsedS: p.Elapsed.Seconds(), Sent: p.Sent, OK: p.OK, Failed: p.Errors, InFlight: p.InFlight,
		TTFTP50: p.RecentTTFTP50ms, TTFTP95: p.RecentTTFTP95ms, ITLP50: p.RecentITLP50ms, ITLP95: p.RecentITLP95ms, RecentCount: p.RecentCount,
		LevelTTFTP95: p.TTFTP95ms, OfferedPerS: offered, TimerLagP99Ms: p.TimerLagP99ms, CPUPercent: p.CPUPercent, Health: p.Health,
		LevelsDone: done, Levels: levels}
	if window > 0 {
		s.RemainingS = max(0, (window - p.Elapsed).Seconds())
	}
	if p.Elapsed > 0 {
		s.SentPerS = float64(p.Sent) / p.Elapsed.Seconds()
	}
	f.d.Status(s)
}

// sweep shows the levels finished so far.
func (f *dashboardFlag) sweep(s *results.Sweep) {
	if f.d != nil {
		f.d.Sweep(s)
	}
}

// run shows a finished run.
func (f *dashboardFlag) run(r *results.Run) {
	if f.d != nil {
		f.d.Run(r)
	}
}

// finish turns the view into the report, gives its viewers a moment to
// take it, and stops serving.
func (f *dashboardFlag) finish() {
	if f.d == nil {
		return
	}
	f.d.Done(2 * time.Second)
	f.d.Close()
	f.d = nil
}
