package otlpexport

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/report/otlpexport/otlptest"
	"github.com/kneebench/knee/results"
)

// TestEndpoint: a receiver's root takes the OTLP metrics path; a URL
// that is no receiver's is refused.
func TestEndpoint(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/metrics"},
		{"http://collector:4318/", "http://collector:4318/v1/metrics"},
		{"https://otel.example/custom/path", "https://otel.example/custom/path"},
		{"ftp://collector:4318", ""},
		{"collector:4318", ""},
		{"http://", ""},
	} {
		got, err := Endpoint(c.in)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("Endpoint(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// sum adds the points' counts and sums (a histogram) or values (a
// gauge) whose attributes include want.
func sum(points []otlptest.Point, want map[string]string) (count uint64, total float64, n int) {
next:
	for _, p := range points {
		for k, v := range want {
			if p.Attrs[k] != v {
				continue next
			}
		}
		count += p.Count
		total += p.Sum + p.Value
		n++
	}
	return count, total, n
}

// TestPushes: the requests recorded reach an OTLP receiver as the GenAI
// conventions' histograms, with their attributes and units, exact in
// count and sum; a finished level's figures as knee.* gauges; the push
// comes every interval while the work runs, and once more at Close.
func TestPushes(t *testing.T) {
	quiet.Wire(t, func() { testPushes(t) })
}

func testPushes(t *testing.T) {
	col := otlptest.Start(t)
	url, err := Endpoint(col.URL)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Start(context.Background(), url, 50*time.Millisecond, Target{Operation: "chat", Model: "m", Address: "gpu", Port: 8000})
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	e.Request(Request{Label: "l", Load: 4, FirstChunk: 100 * ms, Duration: 400 * ms, Streamed: true,
		Chunks: []time.Duration{100 * ms, 200 * ms, 400 * ms}, InputTokens: 30, OutputTokens: 3})
	e.Request(Request{Label: "l", Load: 4, FirstChunk: 50 * ms, Duration: 150 * ms, Streamed: true,
		Chunks: []time.Duration{50 * ms, 150 * ms}, InputTokens: 10, OutputTokens: 2})
	e.Request(Request{Label: "l", Load: 4, Duration: 20 * ms, Failure: "http_5xx"})
	// A push while the work runs: the receiver sees it before Close.
	deadline := time.Now().Add(30 * time.Second)
	for col.Pushes() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * ms)
	}
	if col.Pushes() == 0 {
		t.Fatal("no push within 30 s at a 50 ms interval")
	}
	run := &results.Run{Stats: results.Stats{TTFTSched: results.Summary{Count: 2, P50: 75, P90: 95, P95: 97.5, P99: 99.5}}}
	run.Throughput.RequestsPerS = 1.5
	run.Requests.OK, run.Requests.Failed = 2, 1
	e.Level("l", 4, run, &results.Verdict{Judged: true, Meets: false})
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := col.Err(); err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	ok := map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "server.address": "gpu", "server.port": "8000",
		"knee.label": "l", "knee.load": "4", "resource.service.name": "knee"}
	for _, c := range []struct {
		name  string
		attrs map[string]string
		count uint64
		sum   float64
	}{
		{"gen_ai.client.operation.duration", ok, 3, 0.57},
		{"gen_ai.client.operation.duration", map[string]string{"error.type": "http_5xx"}, 1, 0.02},
		{"gen_ai.client.operation.time_to_first_chunk", ok, 2, 0.15},
		{"gen_ai.client.operation.time_per_output_chunk", ok, 3, 0.4},
		{"gen_ai.client.token.usage", map[string]string{"gen_ai.token.type": "input"}, 2, 40},
		{"gen_ai.client.token.usage", map[string]string{"gen_ai.token.type": "output"}, 2, 5},
	} {
		count, total, _ := sum(col.Points(c.name), c.attrs)
		if count != c.count || !near(total, c.sum) {
			t.Errorf("%s %v: count %d, sum %v; want %d, %v", c.name, c.attrs, count, total, c.count, c.sum)
		}
	}
	if p := col.Points("gen_ai.client.operation.duration"); len(p) == 0 || p[0].Unit != "s" {
		t.Errorf("duration points %+v: want seconds", p)
	}
	for _, c := range []struct {
		name  string
		attrs map[string]string
		want  float64
	}{
		{"knee.latency", map[string]string{"knee.metric": "ttft_sched", "knee.quantile": "0.95", "knee.load": "4"}, 0.0975},
		{"knee.throughput.requests", map[string]string{"knee.load": "4"}, 1.5},
		{"knee.error_ratio", map[string]string{"knee.load": "4"}, 1.0 / 3},
		{"knee.slo.met", map[string]string{"knee.load": "4"}, 0},
	} {
		_, v, n := sum(col.Points(c.name), c.attrs)
		if n != 1 || !near(v, c.want) {
			t.Errorf("%s %v: %d points, value %v; want one of %v", c.name, c.attrs, n, v, c.want)
		}
	}
}

// TestCollectorDown: a receiver that is not there costs the work
// nothing but a count of failed pushes at Close.
func TestCollectorDown(t *testing.T) {
	col := otlptest.Start(t)
	url, _ := Endpoint(col.URL)
	e, err := Start(context.Background(), url, time.Hour, Target{Operation: "chat", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	e.Request(Request{Label: "l", Duration: time.Millisecond})
	col.Close()
	if err := e.Close(context.Background()); err == nil {
		t.Error("a push to a closed receiver reported no failure")
	}
}
