package serverview

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
)

// promServer serves the fixture files in turn: each GET /metrics returns
// the next one (the last repeats). The first is read when the view
// detects the server, the second right before the window.
func promServer(t *testing.T, files ...string) string {
	t.Helper()
	var texts [][]byte
	for _, f := range files {
		b, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, b)
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		i := min(int(n.Add(1))-1, len(texts)-1)
		w.Write(texts[i])
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func figureOf(s *results.Server, name string) results.Figure {
	for _, f := range s.Figures {
		if f.Name == name {
			return f
		}
	}
	return results.Figure{}
}

func approx(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s missing", what)
		return
	}
	if math.Abs(*got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.6f, want %.6f", what, *got, want)
	}
}

// TestVLLMPrometheusView: the window's 200 requests (1,200 − 1,000) put 100
// first tokens in (0.04, 0.06] s, 80 in (0.06, 0.08] and 20 in (0.1, 0.25].
// The median is rank 100 of 200: the top of the first bucket, 60 ms. p99 is
// rank 198: 18 of the 20 in (0.1, 0.25], so 100 + 150 × 18/20 = 235 ms.
func TestVLLMPrometheusView(t *testing.T) {
	quiet.Wire(t, func() { testVLLMPrometheusView(t) })
}

func testVLLMPrometheusView(t *testing.T) {
	url := promServer(t, "vllm_before.txt", "vllm_before.txt", "vllm_after.txt")
	v := New(transport.Target{BaseURL: url, Model: "m"}, "")
	if v.Kind() != "vllm" {
		t.Fatalf("kind %q (%s), want vllm", v.Kind(), v.Note())
	}
	v.Start(t.Context())
	v.End(t.Context())
	res := &results.Run{WindowSeconds: 10}
	res.Stats.TTFT = results.Summary{P50: 70, P99: 250}
	v.Fill(res)
	s := res.Server
	if s == nil || !s.BucketEstimates || s.Source != "vllm" {
		t.Fatalf("server view %+v", s)
	}
	if s.Requests != 200 || s.PromptTokens != 200*512 || s.OutputTokens != 200*128 || s.Preemptions != 3 {
		t.Errorf("counts: requests %d prompt %d output %d preemptions %d; want 200, 102400, 25600, 3", s.Requests, s.PromptTokens, s.OutputTokens, s.Preemptions)
	}
	approx(t, "prefix hit rate", s.PrefixHitRate, 40000.0/102400)
	p50 := figureOf(s, "TTFT p50")
	approx(t, "TTFT p50", p50.Server, 60)
	approx(t, "TTFT p50 bucket low", p50.ServerLow, 40)
	approx(t, "TTFT p50 bucket high", p50.ServerHigh, 60)
	if !p50.Estimate || p50.Delivery != nil {
		t.Errorf("TTFT p50 %+v: an estimate, and no delivery (70 − 60 = 10 ms is narrower than the 20 ms bucket)", p50)
	}
	approx(t, "TTFT p99", figureOf(s, "TTFT p99").Server, 235)
	// Exact means from _sum/_count: (83.52 − 69.6) s / 200 = 69.6 ms.
	approx(t, "TTFT mean", figureOf(s, "TTFT mean").Server, 69.6)
	// Prometheus counters carry no interval of the server's own: a rate
	// over the client's window would restate the client's.
	if f := figureOf(s, "output tok/s"); f.Name != "" {
		t.Errorf("an output tok/s row %+v from counters without a server interval", f)
	}
	if len(s.Missing) != 0 {
		t.Errorf("missing %v, want none (the fixture has every metric)", s.Missing)
	}
}

// TestBucketMidpointIsNotADelivery: the window's 200 E2E latencies sit
// 120 in (0.8, 1] s and 80 in (1, 1.5]. The median is rank 100 in the
// first: 800 + 200 × 100/120 = 966.7 ms, an interpolation in a 200 ms
// bucket. Against a client p50 of 900 ms, "−66.7 ms delivery" would be
// noise; the exact means ((1152 − 960)/200 = 960 ms against 950) still
// give a delivery of −10 ms.
func TestBucketMidpointIsNotADelivery(t *testing.T) {
	quiet.Wire(t, func() { testBucketMidpointIsNotADelivery(t) })
}

func testBucketMidpointIsNotADelivery(t *testing.T) {
	url := promServer(t, "vllm_before.txt", "vllm_before.txt", "vllm_after.txt")
	v := New(transport.Target{BaseURL: url, Model: "m"}, "")
	v.Start(t.Context())
	v.End(t.Context())
	res := &results.Run{WindowSeconds: 10, Requests: results.Requests{Sent: 200, OK: 200}}
	res.Stats.E2E = results.Summary{Count: 200, Mean: 950, P50: 900, P99: 1400}
	v.Fill(res)
	p50 := figureOf(res.Server, "E2E p50")
	approx(t, "E2E p50", p50.Server, 800+200*100.0/120)
	if p50.Delivery != nil {
		t.Errorf("E2E p50 delivery %v from a 200 ms bucket", *p50.Delivery)
	}
	mean := figureOf(res.Server, "E2E mean")
	approx(t, "E2E mean", mean.Server, 960)
	approx(t, "E2E mean delivery", mean.Delivery, -10)
}

// TestTrafficWarningsFromPrometheus: the server counted 200 requests in
// the window. A client that sent 150 sees other traffic; one that
// completed 250 sees a restart or a reset.
func TestTrafficWarningsFromPrometheus(t *testing.T) {
	quiet.Wire(t, func() { testTrafficWarningsFromPrometheus(t) })
}

func testTrafficWarningsFromPrometheus(t *testing.T) {
	for _, tc := range []struct {
		sent, ok int64
		want     string
	}{{150, 150, "other traffic"}, {300, 250, "restarted"}, {200, 200, ""}} {
		url := promServer(t, "vllm_before.txt", "vllm_before.txt", "vllm_after.txt")
		v := New(transport.Target{BaseURL: url, Model: "m"}, "")
		v.Start(t.Context())
		v.End(t.Context())
		res := &results.Run{WindowSeconds: 10}
		res.Requests.Sent, res.Requests.OK = tc.sent, tc.ok
		res.Stats.E2E = results.Summary{Count: tc.ok, Mean: 950}
		v.Fill(res)
		got := strings.Join(res.Server.AllWarnings(), "; ")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("sent %d ok %d: warnings %q, want %q", tc.sent, tc.ok, got, tc.want)
		}
		// Figures over other requests than the client's have no delivery.
		if d := figureOf(res.Server, "E2E mean").Delivery; (tc.want == "") != (d != nil) {
			t.Errorf("sent %d ok %d: E2E mean delivery %v", tc.sent, tc.ok, d)
		}
	}
}

// TestMissingMetricsAreNamed: a server without the queue-time histogram
// gets its name in the view, and its rows show no server value.
func TestMissingMetricsAreNamed(t *testing.T) {
	quiet.Wire(t, func() { testMissingMetricsAreNamed(t) })
}

func testMissingMetricsAreNamed(t *testing.T) {
	var texts []string
	for _, f := range []string{"vllm_before.txt", "vllm_before.txt", "vllm_after.txt"} {
		b, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var keep []string
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "request_queue_time") {
				keep = append(keep, line)
			}
		}
		texts = append(texts, strings.Join(keep, "\n"))
	}
	v := New(transport.Target{BaseURL: serveTexts(t, 200, texts...), Model: "m"}, "")
	v.Start(t.Context())
	v.End(t.Context())
	res := &results.Run{WindowSeconds: 10}
	v.Fill(res)
	if !slices.Equal(res.Server.Missing, []string{"vllm:request_queue_time_seconds"}) {
		t.Errorf("missing %v", res.Server.Missing)
	}
	if f := figureOf(res.Server, "queue mean"); f.Name == "" || f.Server != nil {
		t.Errorf("queue mean %+v, want a row with no server value", f)
	}
}

// TestMetricsWithStatus500AreUsed: a body that parses is read whatever the
// status, and the view says so.
func TestMetricsWithStatus500AreUsed(t *testing.T) {
	quiet.Wire(t, func() { testMetricsWithStatus500AreUsed(t) })
}

func testMetricsWithStatus500AreUsed(t *testing.T) {
	var texts []string
	for _, f := range []string{"vllm_before.txt", "vllm_before.txt", "vllm_after.txt"} {
		b, _ := os.ReadFile("testdata/" + f)
		texts = append(texts, string(b))
	}
	v := New(transport.Target{BaseURL: serveTexts(t, 500, texts...), Model: "m"}, "")
	if v.Kind() != "vllm" {
		t.Fatalf("kind %q (%s)", v.Kind(), v.Note())
	}
	v.Start(t.Context())
	v.End(t.Context())
	res := &results.Run{WindowSeconds: 10}
	v.Fill(res)
	if res.Server.Requests != 200 || !strings.Contains(strings.Join(res.Server.AllWarnings(), ";"), "HTTP 500") {
		t.Errorf("requests %d warnings %q", res.Server.Requests, res.Server.Warnings)
	}
}

// TestLlamaCppView: llama.cpp's counters over the window (2,560 prompt
// tokens in 1.28 s, 320 generated in 6.4 s of slot time) give 0.5 ms per
// prompt token and 20 ms per generated token; the responses' timings give
// the per-request figures.
func TestLlamaCppView(t *testing.T) {
	quiet.Wire(t, func() { testLlamaCppView(t) })
}

func testLlamaCppView(t *testing.T) {
	url := promServer(t, "llamacpp_before.txt", "llamacpp_before.txt", "llamacpp_after.txt")
	v := New(transport.Target{BaseURL: url, Model: "m"}, "")
	if v.Kind() != "llamacpp" {
		t.Fatalf("kind %q (%s)", v.Kind(), v.Note())
	}
	v.Start(t.Context())
	v.End(t.Context())
	res := &results.Run{WindowSeconds: 8}
	res.Tokens.OutputTotal = 320
	res.Stats.TPOT = results.Summary{Count: 10, P50: 21, P99: 25}
	res.ServerTimings = &results.ServerTimings{Requests: 10, PromptMs: results.Summary{Count: 10, P50: 120, P99: 140}, TPOT: results.Summary{Count: 10, P50: 20, P99: 22}}
	v.Fill(res)
	s := res.Server
	if s.Source != "llamacpp" || s.BucketEstimates || s.PromptTokens != 2560 || s.OutputTokens != 320 {
		t.Fatalf("view %+v", s)
	}
	approx(t, "prefill ms/token", figureOf(s, "prefill ms/token").Server, 0.5)
	approx(t, "decode ms/token", figureOf(s, "decode ms/token").Server, 20)
	approx(t, "prefill p50", figureOf(s, "prefill p50").Server, 120)
	approx(t, "TPOT p50 delivery", figureOf(s, "TPOT p50").Delivery, 1)
	if s.Requests != 10 || s.RequestsFrom != "timings" {
		t.Errorf("requests %d from %q, want 10 from the per-response timings (llama.cpp counts none)", s.Requests, s.RequestsFrom)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings %q, want none (the tokens add up)", s.Warnings)
	}
}

// serveTexts serves the texts in turn at /metrics with the given status.
func serveTexts(t *testing.T, status int, texts ...string) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(texts[min(int(n.Add(1))-1, len(texts)-1)]))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestSGLangPrometheusView(t *testing.T) {
	quiet.Wire(t, func() { testSGLangPrometheusView(t) })
}

func testSGLangPrometheusView(t *testing.T) {
	url := promServer(t, "sglang_before.txt", "sglang_before.txt", "sglang_after.txt")
	v := New(transport.Target{BaseURL: url, Model: "m"}, "")
	if v.Kind() != "sglang" {
		t.Fatalf("kind %q, want sglang", v.Kind())
	}
	v.Start(t.Context())
	v.End(t.Context())
	res := &results.Run{WindowSeconds: 20}
	v.Fill(res)
	s := res.Server
	// The fixture holds 350+150 TTFTs before and 489+210 after (its
	// generator rounded 0.7 × 700 down): 139 in (0.1, 0.2] and 60 in
	// (0.2, 0.4] in the window. Median rank 0.5 × 199 = 99.5, so
	// 100 + 100 × 99.5/139 = 171.58 ms.
	if s.Requests != 200 {
		t.Errorf("requests %d, want 200", s.Requests)
	}
	approx(t, "TTFT p50", figureOf(s, "TTFT p50").Server, 100+100*99.5/139)
	approx(t, "cache hit rate", s.PrefixHitRate, 150000.0/200000)
	if f := figureOf(s, "queue p50"); f.Server != nil {
		t.Errorf("queue time has no SGLang histogram in the fixture, got %v", *f.Server)
	}
}

// TestCounterResetBetweenScrapes: counters that went down mean a restart;
// the window is counted from zero and a warning says so.
func TestCounterResetBetweenScrapes(t *testing.T) {
	quiet.Wire(t, func() { testCounterResetBetweenScrapes(t) })
}

func testCounterResetBetweenScrapes(t *testing.T) {
	url := promServer(t, "vllm_before.txt", "vllm_before.txt", "vllm_reset.txt")
	res := &results.Run{WindowSeconds: 10}
	fillView(t, url, res)
	if res.Server.Requests != 100 || !strings.Contains(strings.Join(res.Server.AllWarnings(), ";"), "restart") {
		t.Errorf("requests %d warnings %q; want 100 and a restart warning", res.Server.Requests, res.Server.Warnings)
	}
}

func TestNoServerMetrics(t *testing.T) {
	quiet.Wire(t, func() { testNoServerMetrics(t) })
}

func testNoServerMetrics(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	v := New(transport.Target{BaseURL: srv.URL + "/v1", Model: "m"}, "")
	res := &results.Run{}
	v.Start(t.Context())
	v.End(t.Context())
	v.Fill(res)
	if res.Server != nil || len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "server metrics not available: GET "+srv.URL+"/metrics answered HTTP 404") {
		t.Errorf("server %+v warnings %q", res.Server, res.Warnings)
	}
}

func TestHistogramQuantile(t *testing.T) {
	h := bucketCounts{bounds: []float64{1, 2, 4, math.Inf(1)}, counts: []float64{10, 30, 40, 42}}
	for _, tc := range []struct{ q, want float64 }{{0.1, 0.42}, {0.5, 1.55}, {0.95, 4}} {
		// rank = q × 42. 0.1 → 4.2 in [0,1]: 0.42. 0.5 → 21 in (1,2]: 1 + 11/20. 0.95 → 39.9 ≤ 40 in (2,4]: 2 + 2×9.9/10 = 3.98.
		got, _ := h.quantile(tc.q)
		if tc.q == 0.95 {
			tc.want = 3.98
		}
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got, _ := h.quantile(0.99); got != 4 {
		t.Errorf("a rank in +Inf gives %v, want the highest finite bound 4", got)
	}
}

// fillView runs a server view of url around an empty window and fills res.
func fillView(t *testing.T, url string, res *results.Run) {
	t.Helper()
	v := New(transport.Target{BaseURL: url, Model: "m"}, "")
	v.Start(t.Context())
	v.End(t.Context())
	v.Fill(res)
}
