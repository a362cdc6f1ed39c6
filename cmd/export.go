package cmd

import (
	"fmt"
	"strings"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/report/promexport"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// exportFlag is --export: the figures published while the work runs.
type exportFlag struct {
	specs []string
	// addr is the Prometheus endpoint's address, once checked.
	addr string
	e    *promexport.Exporter
}

func (f *exportFlag) register(c *cobra.Command) {
	c.Flags().StringArrayVar(&f.specs, "export", nil, "publish the figures while the work runs: prometheus=ADDR serves the level in progress and each finished level's percentiles, throughput, errors and verdict at http://ADDR/metrics for a Prometheus to scrape (PORT or HOST:PORT, loopback unless a host is given)")
}

// check parses --export before anything is measured.
func (f *exportFlag) check() error {
	for _, s := range f.specs {
		kind, where, _ := strings.Cut(s, "=")
		switch kind {
		case "prometheus":
			if f.addr != "" {
				return usageErr("--export prometheus= given twice")
			}
			addr, err := report.DashboardAddress(where)
			if err != nil {
				return usageErr("--export prometheus=%w", err)
			}
			f.addr = addr
		case "otlp":
			return usageErr("--export otlp=: not built yet; use prometheus=ADDR")
		default:
			return usageErr("--export %q: want prometheus=ADDR", s)
		}
	}
	return nil
}

// start listens, before anything is measured, and says where.
func (f *exportFlag) start(c *cobra.Command) error {
	if f.addr == "" {
		return nil
	}
	e, err := promexport.Start(f.addr)
	if err != nil {
		return withCode(ExitRuntime, fmt.Errorf("--export prometheus=%s: %w", f.addr, err))
	}
	f.e = e
	fmt.Fprintf(c.ErrOrStderr(), "exporting to Prometheus at %s\n", e.URL())
	return nil
}

// on says the figures are being published.
func (f *exportFlag) on() bool { return f.e != nil }

func (f *exportFlag) status(label string, load float64, p bench.Progress) {
	if f.e != nil {
		f.e.Status(label, load, p)
	}
}

func (f *exportFlag) level(label string, l results.Level) {
	if f.e != nil {
		f.e.Level(label, l.Load, l.Run, l.Verdict)
	}
}

func (f *exportFlag) sweep(label string, s *results.Sweep) {
	if f.e != nil {
		f.e.Sweep(label, s)
	}
}

// finish stops serving.
func (f *exportFlag) finish() {
	if f.e != nil {
		f.e.Close()
		f.e = nil
	}
}
