package cmd

import (
	"context"
	"fmt"

	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/live"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/report/otlpexport"
	"github.com/kneebench/knee/report/promexport"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// exportFlag is --export: the figures published while the work runs, on
// a Prometheus endpoint, pushed over OTLP, or both.
type exportFlag struct {
	specs []string
	// addr is the Prometheus endpoint's address and otlp the OTLP
	// receiver's URL, once checked.
	addr, otlp string
	e          *promexport.Exporter
	o          *otlpexport.Exporter
	// interval is how often OTLP pushes (a test's shorter).
	interval time.Duration
}

func (f *exportFlag) register(c *cobra.Command) {
	c.Flags().StringArrayVar(&f.specs, "export", nil, "publish the figures while the work runs (repeatable): prometheus=ADDR serves the level in progress and each finished level's percentiles, throughput, errors and verdict at http://ADDR/metrics for a Prometheus to scrape (PORT or HOST:PORT, loopback unless a host is given); otlp=URL pushes them, and every measured request into the GenAI conventions' gen_ai.client.* histograms, to an OTLP/HTTP receiver every 5 s (e.g. http://collector:4318; OTEL_EXPORTER_OTLP_HEADERS is sent)")
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
			if f.otlp != "" {
				return usageErr("--export otlp= given twice")
			}
			u, err := otlpexport.Endpoint(where)
			if err != nil {
				return usageErr("--export otlp=%w", err)
			}
			f.otlp = u
		default:
			return usageErr("--export %q: want prometheus=ADDR or otlp=URL", s)
		}
	}
	return nil
}

// start listens and connects, before anything is measured, and says
// where.
func (f *exportFlag) start(c *cobra.Command) error {
	if f.addr != "" {
		e, err := promexport.Start(f.addr)
		if err != nil {
			return withCode(ExitRuntime, fmt.Errorf("--export prometheus=%s: %w", f.addr, err))
		}
		f.e = e
		fmt.Fprintf(c.ErrOrStderr(), "exporting to Prometheus at %s\n", e.URL())
	}
	return nil
}

// startOTLP starts the push once the target is known: its model and
// address are every request's attributes.
func (f *exportFlag) startOTLP(c *cobra.Command, endpoint transport.Endpoint, model, baseURL string) error {
	if f.otlp == "" || f.o != nil {
		return nil
	}
	t := otlpexport.Target{Operation: operationName(endpoint), Model: model}
	if u, err := url.Parse(baseURL); err == nil {
		t.Address = u.Hostname()
		t.Port, _ = strconv.Atoi(u.Port())
		if t.Port == 0 && t.Address != "" {
			t.Port = map[string]int{"http": 80, "https": 443}[u.Scheme]
		}
	}
	o, err := otlpexport.Start(c.Context(), f.otlp, cmpDuration(f.interval, otlpexport.DefaultInterval), t)
	if err != nil {
		return withCode(ExitRuntime, fmt.Errorf("--export otlp=%s: %w", results.RedactURL(f.otlp), err))
	}
	f.o = o
	fmt.Fprintf(c.ErrOrStderr(), "exporting over OTLP to %s\n", results.RedactURL(f.otlp))
	return nil
}

// operationName is gen_ai.operation.name for an endpoint: the
// conventions' chat, text_completion and embeddings, and the endpoint's
// own name where they have none.
func operationName(e transport.Endpoint) string { return e.Kind().Operation }

func cmpDuration(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

// on says the figures are being published.
func (f *exportFlag) on() bool { return f.e != nil || f.otlp != "" }

// observe is live.Live's Observe for the OTLP push, or nil: label names
// the work, and a level its load.
func (f *exportFlag) observe(label string) func(*bench.Level, *record.Record) {
	if f.o == nil {
		return nil
	}
	return func(lv *bench.Level, r *record.Record) {
		streamed := r.FirstToken > 0 && r.Chunks > 0
		req := otlpexport.Request{Label: label, Load: lv.Load, Duration: r.Done - r.Sent, Streamed: streamed, Chunks: r.ChunkTimes,
			InputTokens: r.PromptTokens, OutputTokens: r.CompletionTokens, Failure: r.Class}
		if streamed {
			req.FirstChunk = r.FirstToken - r.Sent
		}
		f.o.Request(req)
	}
}

func (f *exportFlag) status(label string, load float64, p live.Progress) {
	if f.e != nil {
		f.e.Status(label, load, p)
	}
	if f.o != nil {
		f.o.Status(label, load, p)
	}
}

func (f *exportFlag) level(label string, l results.Level) {
	if f.e != nil {
		f.e.Level(label, l.Load, l.Run, l.Verdict)
	}
	if f.o != nil {
		f.o.Level(label, l.Load, l.Run, l.Verdict)
	}
}

func (f *exportFlag) sweep(label string, s *results.Sweep) {
	if f.e != nil {
		f.e.Sweep(label, s)
	}
	if f.o != nil {
		f.o.Sweep(label, s)
	}
}

// finish stops serving and pushes what is left, saying on errOut when
// the collector did not take it all.
func (f *exportFlag) finish(c *cobra.Command) {
	if f.e != nil {
		f.e.Close()
		f.e = nil
	}
	if f.o != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.o.Close(ctx); err != nil {
			fmt.Fprintf(c.ErrOrStderr(), "knee: warning: --export otlp=%s: %v\n", results.RedactURL(f.otlp), err)
		}
		f.o = nil
	}
}
