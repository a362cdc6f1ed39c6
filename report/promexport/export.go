// Package promexport publishes a run's or a sweep's figures on a
// Prometheus endpoint while it runs (knee run/sweep --export
// prometheus=ADDR), so a Grafana board can sit beside the server's own:
// the level in progress from the same snapshot the progress line shows,
// and each finished level's exact figures and verdict, labelled by the
// work's label and the level's load.
package promexport

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Exporter serves the figures at /metrics.
type Exporter struct {
	// GaugeSink is its figure side as a report.Sink.
	report.GaugeSink
	reg *prometheus.Registry
	srv *http.Server
	ln  net.Listener

	// The level in progress.
	load, sent, ok, errs, inFlight, healthy *prometheus.GaugeVec
	recentTTFT, recentITL                   *prometheus.GaugeVec
	// Finished levels.
	latency                      *prometheus.GaugeVec
	reqRate, tokRate, errorRatio *prometheus.GaugeVec
	goodput, met, levelHealthy   *prometheus.GaugeVec
	sloKnee                      *prometheus.GaugeVec
}

// Start listens on addr (host:port; port 0 picks a free one) and serves.
func Start(addr string) (*Exporter, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	e := &Exporter{reg: prometheus.NewRegistry(), ln: ln}
	e.GaugeSink = report.GaugeSink{G: e}
	g := func(name, help string, labels ...string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "knee", Name: name, Help: help}, labels)
		e.reg.MustRegister(v)
		return v
	}
	e.load = g("level_load", "The load of the level in progress: arrivals per second, or streams of a closed loop.", "label")
	e.sent = g("level_requests_sent", "Requests the level in progress has sent so far.", "label")
	e.ok = g("level_requests_ok", "Requests of the level in progress that succeeded so far.", "label")
	e.errs = g("level_requests_errors", "Requests of the level in progress that failed so far.", "label")
	e.inFlight = g("level_requests_in_flight", "Requests of the level in progress now in flight.", "label")
	e.healthy = g("client_healthy", "1 while the client's verdict on itself is healthy, 0 when it limits the figures.", "label")
	e.recentTTFT = g("recent_ttft_seconds", "Time to first token from the schedule over the requests that ended in the last few seconds.", "label", "quantile")
	e.recentITL = g("recent_itl_seconds", "Inter-token latency over the requests that ended in the last few seconds.", "label", "quantile")
	e.latency = g("latency_seconds", "A finished level's latency percentiles (from the scheduled arrival where the metric says sched).", "label", "load", "metric", "quantile")
	e.reqRate = g("throughput_requests_per_second", "A finished level's completed requests per second.", "label", "load")
	e.tokRate = g("throughput_output_tokens_per_second", "A finished level's output tokens per second.", "label", "load")
	e.errorRatio = g("error_ratio", "A finished level's failed share of the requests that ended.", "label", "load")
	e.goodput = g("goodput_requests_per_second", "A finished level's requests per second that met every per-request bound.", "label", "load")
	e.met = g("slo_met", "1 when a finished level meets the SLO, 0 when it misses; absent when the SLO does not judge it.", "label", "load")
	e.levelHealthy = g("level_client_healthy", "1 when the client was healthy through a finished level.", "label", "load")
	e.sloKnee = g("slo_knee_load", "The sweep's SLO knee: the largest load meeting the SLO; absent until one is found.", "label")
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}))
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// Serve ends with ErrServerClosed at Close; nothing else is for
	// anyone to hear.
	go func() { _ = e.srv.Serve(ln) }()
	return e, nil
}

// URL is where the figures are served.
func (e *Exporter) URL() string { return "http://" + e.ln.Addr().String() + "/metrics" }

// Status publishes the level in progress.
func (e *Exporter) Status(label string, load float64, p results.Progress) {
	e.load.WithLabelValues(label).Set(load)
	e.sent.WithLabelValues(label).Set(float64(p.Sent))
	e.ok.WithLabelValues(label).Set(float64(p.OK))
	e.errs.WithLabelValues(label).Set(float64(p.Errors))
	e.inFlight.WithLabelValues(label).Set(float64(p.InFlight))
	e.healthy.WithLabelValues(label).Set(boolValue(p.Health == "" || p.Health == results.VerdictHealthy))
	if p.RecentCount > 0 {
		e.recentTTFT.WithLabelValues(label, "0.5").Set(p.RecentTTFTP50ms / 1000)
		e.recentTTFT.WithLabelValues(label, "0.95").Set(p.RecentTTFTP95ms / 1000)
	}
	if p.RecentTokens > 0 {
		e.recentITL.WithLabelValues(label, "0.5").Set(p.RecentITLP50ms / 1000)
		e.recentITL.WithLabelValues(label, "0.95").Set(p.RecentITLP95ms / 1000)
	}
}

// Level publishes a finished level's figures and verdict (nil: a run,
// which no SLO judged).
func (e *Exporter) Level(label string, load float64, r *results.Run, v *results.Verdict) {
	if r == nil {
		return
	}
	l := strconv.FormatFloat(load, 'g', -1, 64)
	for _, m := range results.Metrics {
		if !m.Latency() || m.Stat(&r.Stats).Count == 0 {
			continue
		}
		for _, p := range results.Percentiles {
			q := strconv.FormatFloat(p/100, 'g', -1, 64)
			e.latency.WithLabelValues(label, l, m.Name, q).Set(m.Stat(&r.Stats).At(p) / 1000)
		}
	}
	e.reqRate.WithLabelValues(label, l).Set(r.Throughput.RequestsPerS)
	e.tokRate.WithLabelValues(label, l).Set(r.Throughput.OutputTokensPerS)
	if ended := r.Requests.OK + r.Requests.Failed; ended > 0 {
		e.errorRatio.WithLabelValues(label, l).Set(float64(r.Requests.Failed) / float64(ended))
	}
	if r.Goodput != nil {
		e.goodput.WithLabelValues(label, l).Set(r.Goodput.RequestsPerS)
	}
	e.levelHealthy.WithLabelValues(label, l).Set(boolValue(r.Health.Healthy()))
	if v != nil && v.Judged {
		e.met.WithLabelValues(label, l).Set(boolValue(v.Meets))
	}
}

// Sweep publishes a sweep's SLO knee, once found.
func (e *Exporter) Sweep(label string, s *results.Sweep) {
	if s != nil && s.Knees.SLO != nil {
		e.sloKnee.WithLabelValues(label).Set(s.Knees.SLO.Load)
	}
}

// Close stops serving.
func (e *Exporter) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = e.srv.Shutdown(ctx)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
