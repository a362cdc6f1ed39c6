// Package otlptest is an OTLP/HTTP metrics receiver for tests: it decodes
// what an exporter pushes with OpenTelemetry's own protobuf types and
// keeps the latest push, flattened to points.
package otlptest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	metrics "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// Collector receives pushes at /v1/metrics on 127.0.0.1.
type Collector struct {
	URL string

	srv    *httptest.Server
	mu     sync.Mutex
	pushes int
	last   *colmetrics.ExportMetricsServiceRequest
	bad    error
}

// Start starts a collector that stops with the test.
func Start(t testing.TB) *Collector {
	c := &Collector{}
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	c.URL, c.srv = srv.URL, srv
	return c
}

// Close stops receiving, before the test ends: pushes then fail.
func (c *Collector) Close() { c.srv.Close() }

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := &colmetrics.ExportMetricsServiceRequest{}
	if err == nil {
		err = proto.Unmarshal(body, req)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		c.bad = fmt.Errorf("%s %s (%s): %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
		http.Error(w, "bad push", http.StatusBadRequest)
		return
	}
	c.pushes++
	c.last = req
	out, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Pushes counts the pushes taken, and Err is the last one refused.
func (c *Collector) Pushes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pushes
}

// Err is why the last refused push was refused, or nil.
func (c *Collector) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bad
}

// Point is one data point of the latest push: its attributes (and the
// resource's, as resource.KEY), and a histogram's count and sum or a
// gauge's value; Unit is its metric's.
type Point struct {
	Attrs      map[string]string
	Unit       string
	Count      uint64
	Sum, Value float64
	Histogram  bool
}

// Points are the latest push's points of the metric name.
func (c *Collector) Points(name string) []Point {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		return nil
	}
	var out []Point
	for _, rm := range c.last.ResourceMetrics {
		base := map[string]string{}
		for _, kv := range rm.GetResource().GetAttributes() {
			base["resource."+kv.Key] = value(kv.Value)
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != name {
					continue
				}
				switch d := m.Data.(type) {
				case *metrics.Metric_Histogram:
					for _, p := range d.Histogram.DataPoints {
						out = append(out, Point{Attrs: attrs(base, p.Attributes), Unit: m.Unit, Count: p.Count, Sum: p.GetSum(), Histogram: true})
					}
				case *metrics.Metric_Gauge:
					for _, p := range d.Gauge.DataPoints {
						out = append(out, Point{Attrs: attrs(base, p.Attributes), Unit: m.Unit, Value: p.GetAsDouble() + float64(p.GetAsInt())})
					}
				}
			}
		}
	}
	return out
}

func attrs(base map[string]string, kvs []*common.KeyValue) map[string]string {
	out := make(map[string]string, len(base)+len(kvs))
	for k, v := range base {
		out[k] = v
	}
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *common.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *common.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *common.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	}
	return ""
}
