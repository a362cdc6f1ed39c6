package server

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/simulator/simtest"
)

// testModels has one model per engine; the fixed_rate timing is chosen to
// be easy to check: 20 ms overhead, prefill 10,000 tokens/s, 100 tokens/s.
const testModels = `
hardware:
  gpu: {hbm_gib: 80, memory_bandwidth_gbps: 3000, peak_tflops: 989}
models:
  - name: fixed
    context_length: 4096
    engine: fixed_rate
    fixed_rate: {overhead_ms: 20, prefill_tokens_per_second: 10000, decode_tokens_per_second: 100}
  - name: instant
    context_length: 4096
    engine: instant
  - name: sched
    context_length: 32768
    engine: scheduler
    hardware: gpu
    weights: {parameters_billions: 6.74, bytes_per_parameter: 2}
    kv_cache: {bytes_per_token: 524288, block_size: 16, gpu_memory_utilization: 0.9}
    scheduler: {max_num_batched_tokens: 8192, max_num_seqs: 64}
`

type testServer struct {
	*Server
	URL string // http://127.0.0.1:port
}

func startSim(t testing.TB, models, responses string, apiKey string) *testServer {
	t.Helper()
	mf, err := ParseModels("test-models", []byte(models))
	if err != nil {
		t.Fatal(err)
	}
	if responses == "" {
		b, _ := builtinFile("responses")
		responses = string(b)
	}
	r, err := ParseResponses("test-responses", []byte(responses))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Options{Models: mf, Responder: r, APIKey: apiKey, MaxBodyBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if n := simtest.Of(t); n != nil {
		return &testServer{Server: s, URL: n.Serve(t, s.Serve, func() { _ = s.Shutdown(2 * time.Second) })}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { _ = s.Shutdown(2 * time.Second) })
	return &testServer{Server: s, URL: "http://" + ln.Addr().String()}
}

// inBubble runs f in a synctest bubble (simtest.Run): startSim serves on
// its in-memory network and post and get reach it there, so a server's
// seconds take no wall time and its timing is exact.
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	simtest.Run(t, func(t *testing.T, _ *simtest.Net) { f(t) })
}

// client is how a test reaches its servers: over its bubble's network
// when it runs in one.
func client(t testing.TB) *http.Client {
	if n := simtest.Of(t); n != nil {
		return n.Client()
	}
	return http.DefaultClient
}

// post sends a JSON body and returns status and body.
func post(t testing.TB, url, body string, headers ...string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := client(t).Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func get(t testing.TB, url string) (int, []byte) {
	t.Helper()
	resp, err := client(t).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func summaryOf(t testing.TB, ts *testServer, model string) ModelSummary {
	t.Helper()
	_, b := get(t, ts.URL+"/metrics/summary")
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s.Models[model]
}

// errorOf decodes an OpenAI error body.
func errorOf(t testing.TB, b []byte) errorBody {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("not an OpenAI error body: %s", b)
	}
	return e
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// builtinFile reads one of the simulator's built-in files (they live with
// the composition root, which this package may not import).
func builtinFile(name string) ([]byte, error) {
	return os.ReadFile("../model/builtin/" + name + ".yml")
}

// loadBuiltinResponses parses a built-in responses file.
func loadBuiltinResponses(name string) (*Responder, error) {
	b, err := builtinFile(name)
	if err != nil {
		return nil, err
	}
	return ParseResponses("builtin:"+name, b)
}
