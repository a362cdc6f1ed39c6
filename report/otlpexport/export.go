// Package otlpexport publishes a run's or a sweep's figures over OTLP/HTTP
// while it runs (knee run/sweep --export otlp=URL), for an OpenTelemetry
// collector to pass on: every measured request into the GenAI semantic
// conventions' client histograms (gen_ai.client.operation.duration,
// time_to_first_chunk, time_per_output_chunk, gen_ai.client.token.usage),
// and knee's own figures, which no convention names (the level in
// progress, each finished level's exact percentiles from the schedule,
// throughput, errors and verdict, the SLO knee), as knee.* gauges.
package otlpexport

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// DefaultInterval is how often the figures are pushed.
const DefaultInterval = 5 * time.Second

// The GenAI conventions' bucket boundaries: durations in seconds, token
// counts, and the time per output chunk (the server's TPOT set).
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	chunkBuckets    = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
)

// Target is what every request went to, as the conventions name it.
type Target struct {
	// Operation is gen_ai.operation.name: chat, text_completion,
	// embeddings, or the endpoint's own name where the conventions have
	// none.
	Operation string
	Model     string
	// Address and Port are server.address and server.port.
	Address string
	Port    int
}

// Request is one measured request as the conventions read it (the
// sinks' report.Request).
type Request = report.Request

// Exporter pushes the figures every interval, and once more at Close.
type Exporter struct {
	// GaugeSink is its figure side as a report.Sink.
	report.GaugeSink
	provider *sdkmetric.MeterProvider
	endpoint string
	target   []attribute.KeyValue

	duration, firstChunk, perChunk metric.Float64Histogram
	tokens                         metric.Int64Histogram

	load, sent, ok, errs, inFlight, healthy metric.Float64Gauge
	latency, reqRate, tokRate, errorRatio   metric.Float64Gauge
	goodput, met, levelHealthy, sloKnee     metric.Float64Gauge

	mu       sync.Mutex
	failures int
	lastErr  error
	// closing is set while Close pushes the last time; cutAtClose is a
	// periodic push it cut short.
	closing    bool
	cutAtClose error
}

// Endpoint checks an --export otlp= URL and returns it with the OTLP
// metrics path (/v1/metrics) when it names none, as OTEL_EXPORTER_OTLP_ENDPOINT
// is read.
func Endpoint(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q: want an http or https URL of an OTLP/HTTP receiver, e.g. http://collector:4318", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/metrics"
	}
	return u.String(), nil
}

// Start sets up the push to endpoint (an Endpoint's answer) every
// interval. Headers the collector needs come from
// OTEL_EXPORTER_OTLP_HEADERS, as for any OpenTelemetry SDK.
func Start(ctx context.Context, endpoint string, interval time.Duration, t Target) (*Exporter, error) {
	exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(endpoint), otlpmetrichttp.WithTimeout(5*time.Second),
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	if err != nil {
		return nil, err
	}
	e := &Exporter{endpoint: endpoint}
	e.GaugeSink = report.GaugeSink{G: e}
	// A collector that is down costs a warning at the end, never a line
	// of the SDK's own in the middle of the progress.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(e.failed))
	res := resource.NewSchemaless(attribute.String("service.name", "knee"))
	e.provider = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(interval))))
	e.target = []attribute.KeyValue{attribute.String("gen_ai.operation.name", t.Operation), attribute.String("gen_ai.request.model", t.Model)}
	if t.Address != "" {
		e.target = append(e.target, attribute.String("server.address", t.Address))
		if t.Port > 0 {
			e.target = append(e.target, attribute.Int("server.port", t.Port))
		}
	}
	if err := e.instruments(e.provider.Meter("github.com/kneebench/knee")); err != nil {
		_ = e.provider.Shutdown(ctx)
		return nil, err
	}
	return e, nil
}

// instruments makes the histograms and gauges.
func (e *Exporter) instruments(m metric.Meter) error {
	var errs []error
	fh := func(name, unit, help string, bounds []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(help), metric.WithExplicitBucketBoundaries(bounds...))
		errs = append(errs, err)
		return h
	}
	g := func(name, unit, help string) metric.Float64Gauge {
		v, err := m.Float64Gauge(name, metric.WithUnit(unit), metric.WithDescription(help))
		errs = append(errs, err)
		return v
	}
	e.duration = fh("gen_ai.client.operation.duration", "s", "A measured request's time from its send to its end.", durationBuckets)
	e.firstChunk = fh("gen_ai.client.operation.time_to_first_chunk", "s", "A streamed request's time from its send to its first chunk.", durationBuckets)
	e.perChunk = fh("gen_ai.client.operation.time_per_output_chunk", "s", "The time between a streamed response's chunks after the first.", chunkBuckets)
	var err error
	e.tokens, err = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("A measured request's input and output tokens (gen_ai.token.type)."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	errs = append(errs, err)
	e.load = g("knee.level.load", "1", "The load of the level in progress: arrivals per second, or streams of a closed loop.")
	e.sent = g("knee.level.requests.sent", "{request}", "Requests the level in progress has sent so far.")
	e.ok = g("knee.level.requests.ok", "{request}", "Requests of the level in progress that succeeded so far.")
	e.errs = g("knee.level.requests.errors", "{request}", "Requests of the level in progress that failed so far.")
	e.inFlight = g("knee.level.requests.in_flight", "{request}", "Requests of the level in progress now in flight.")
	e.healthy = g("knee.client.healthy", "1", "1 while the client's verdict on itself is healthy, 0 when it limits the figures.")
	e.latency = g("knee.latency", "s", "A finished level's exact latency percentile (knee.metric, knee.quantile; from the scheduled arrival where the metric says sched).")
	e.reqRate = g("knee.throughput.requests", "{request}/s", "A finished level's completed requests per second.")
	e.tokRate = g("knee.throughput.output_tokens", "{token}/s", "A finished level's output tokens per second.")
	e.errorRatio = g("knee.error_ratio", "1", "A finished level's failed share of the requests that ended.")
	e.goodput = g("knee.goodput", "{request}/s", "A finished level's requests per second that met every per-request bound.")
	e.met = g("knee.slo.met", "1", "1 when a finished level meets the SLO, 0 when it misses; absent when the SLO does not judge it.")
	e.levelHealthy = g("knee.level.client_healthy", "1", "1 when the client was healthy through a finished level.")
	e.sloKnee = g("knee.slo.knee", "1", "The sweep's SLO knee: the largest load meeting the SLO; absent until one is found.")
	return errors.Join(errs...)
}

// failed counts an export the collector did not take. A periodic push
// that Close cut short is set aside: it is no loss when Close's own push
// of the (cumulative) figures goes through.
func (e *Exporter) failed(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing && errors.Is(err, context.Canceled) {
		e.cutAtClose = err
		return
	}
	e.failures++
	e.lastErr = err
}

// attrs are the target's attributes with the work's label and load, and
// any more.
func (e *Exporter) attrs(label string, load float64, more ...attribute.KeyValue) metric.MeasurementOption {
	kv := make([]attribute.KeyValue, 0, len(e.target)+2+len(more))
	kv = append(kv, e.target...)
	kv = append(kv, attribute.String("knee.label", label))
	if load > 0 {
		kv = append(kv, attribute.String("knee.load", strconv.FormatFloat(load, 'g', -1, 64)))
	}
	return metric.WithAttributes(append(kv, more...)...)
}

// Request records one measured request. It is safe for concurrent use.
func (e *Exporter) Request(r Request) {
	ctx := context.Background()
	var opt metric.MeasurementOption
	if r.Failure != "" {
		opt = e.attrs(r.Label, r.Load, attribute.String("error.type", r.Failure))
	} else {
		opt = e.attrs(r.Label, r.Load)
	}
	e.duration.Record(ctx, r.Duration.Seconds(), opt)
	if r.Failure != "" {
		return
	}
	if r.Streamed && r.FirstChunk > 0 {
		e.firstChunk.Record(ctx, r.FirstChunk.Seconds(), opt)
		for i := 1; i < len(r.Chunks); i++ {
			e.perChunk.Record(ctx, (r.Chunks[i] - r.Chunks[i-1]).Seconds(), opt)
		}
	}
	if r.InputTokens > 0 {
		e.tokens.Record(ctx, int64(r.InputTokens), e.attrs(r.Label, r.Load, attribute.String("gen_ai.token.type", "input")))
	}
	if r.OutputTokens > 0 {
		e.tokens.Record(ctx, int64(r.OutputTokens), e.attrs(r.Label, r.Load, attribute.String("gen_ai.token.type", "output")))
	}
}

// Status records the level in progress.
func (e *Exporter) Status(label string, load float64, p results.Progress) {
	ctx, opt := context.Background(), e.attrs(label, 0)
	e.load.Record(ctx, load, opt)
	e.sent.Record(ctx, float64(p.Sent), opt)
	e.ok.Record(ctx, float64(p.OK), opt)
	e.errs.Record(ctx, float64(p.Errors), opt)
	e.inFlight.Record(ctx, float64(p.InFlight), opt)
	e.healthy.Record(ctx, boolValue(p.Health == "" || p.Health == results.VerdictHealthy), opt)
}

// Level records a finished level's figures and verdict (nil: a run,
// which no SLO judged).
func (e *Exporter) Level(label string, load float64, r *results.Run, v *results.Verdict) {
	if r == nil {
		return
	}
	ctx := context.Background()
	for _, m := range results.Metrics {
		if !m.Latency() || m.Stat(&r.Stats).Count == 0 {
			continue
		}
		for _, p := range results.Percentiles {
			q := strconv.FormatFloat(p/100, 'g', -1, 64)
			e.latency.Record(ctx, m.Stat(&r.Stats).At(p)/1000, e.attrs(label, load, attribute.String("knee.metric", m.Name), attribute.String("knee.quantile", q)))
		}
	}
	opt := e.attrs(label, load)
	e.reqRate.Record(ctx, r.Throughput.RequestsPerS, opt)
	e.tokRate.Record(ctx, r.Throughput.OutputTokensPerS, opt)
	if ended := r.Requests.OK + r.Requests.Failed; ended > 0 {
		e.errorRatio.Record(ctx, float64(r.Requests.Failed)/float64(ended), opt)
	}
	if r.Goodput != nil {
		e.goodput.Record(ctx, r.Goodput.RequestsPerS, opt)
	}
	e.levelHealthy.Record(ctx, boolValue(r.Health.Healthy()), opt)
	if v != nil && v.Judged {
		e.met.Record(ctx, boolValue(v.Meets), opt)
	}
}

// Sweep records a sweep's SLO knee, once found.
func (e *Exporter) Sweep(label string, s *results.Sweep) {
	if s != nil && s.Knees.SLO != nil {
		e.sloKnee.Record(context.Background(), s.Knees.SLO.Load, e.attrs(label, 0))
	}
}

// Close pushes what is left and stops. It reports how many pushes the
// collector did not take, and the last one's error.
func (e *Exporter) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closing = true
	e.mu.Unlock()
	err := e.provider.Shutdown(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closing = false
	if err != nil {
		e.failures++
		e.lastErr = err
		if e.cutAtClose != nil {
			e.failures++
		}
	}
	if e.failures > 0 {
		return fmt.Errorf("%d pushes to the collector failed, the last: %w", e.failures, e.lastErr)
	}
	return nil
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
