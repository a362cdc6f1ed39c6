package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator"
)

// TestMain runs the package's parallel tests four at a time unless told
// otherwise: most of them wait on the wall clock of a load's window, not
// on a processor, so two cores carry four of them without a late send.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.parallel"); f != nil && f.Value.String() == f.DefValue {
		_ = f.Value.Set("4")
	}
	os.Exit(m.Run())
}

// execute runs knee with args and returns the exit code and outputs.
func execute(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return executeCtx(t, context.Background(), args...)
}

// executeCtx is execute with a context (withNonce, for one).
func executeCtx(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if n := netOf(t); n != nil {
		ctx = transport.WithDial(ctx, n.Dial)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	code := Execute(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// slow skips a test that drives real load for ten seconds or more when
// tests run with -short, as CI's race pass does; the full pass runs it.
func slow(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("drives real load for seconds; skipped with -short")
	}
}

// heavy skips a test that predicts many levels in virtual time: seconds
// alone, minutes under the race detector, whose pass (-short) the
// package must finish within go test's ten minutes.
func heavy(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("predicts many levels in virtual time; skipped with -short")
	}
}

// startSim serves the built-in models (or a given file) on 127.0.0.1.
func startSim(t *testing.T, models, apiKey string) string {
	t.Helper()
	return startSimWith(t, models, apiKey, "builtin:bench-responses")
}

// startSimWith is startSim with a responses file: builtin:responses, as a
// standalone knee sim has, ends answers at their own end of sequence.
func startSimWith(t *testing.T, models, apiKey, responses string) string {
	t.Helper()
	return startSimOptions(t, models, responses, func(o *simulator.Options) { o.APIKey = apiKey })
}

// startSimOptions is startSimWith with the server's options set by opt.
func startSimOptions(t *testing.T, models, responses string, opt func(*simulator.Options)) string {
	t.Helper()
	if models == "" {
		models = "builtin:models"
	}
	if netOf(t) != nil {
		return simIn(t, models, responses, opt)
	}
	mf, err := simulator.LoadModels(context.Background(), models)
	if err != nil {
		t.Fatal(err)
	}
	r, err := simulator.LoadResponses(context.Background(), responses)
	if err != nil {
		t.Fatal(err)
	}
	o := simulator.Options{Models: mf, Responder: r}
	opt(&o)
	s, err := simulator.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { _ = s.Shutdown(time.Second) })
	return "http://" + ln.Addr().String() + "/v1"
}

func TestBadUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("not json\n"), 0o644)
	cases := [][]string{
		{"run", "--bogus"},
		{"run", "--rate", "1", "--concurrency", "2", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--requests", "-5", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--rate", "-1", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--dataset", bad, "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--endpoint", "audio", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--extra-body", "[1]", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--shard", "4/4", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--shard", "one/two", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--shards", "4", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--start-at", "yesterday", "--base-url", "http://127.0.0.1:1/v1"},
		{"sweep", "--level-interval", "5s", "--base-url", "http://127.0.0.1:1/v1"},
		{"merge", "x.json"},
		{"run", "extra-arg"},
		{"frobnicate"},
		{"sweep", "--workload", "voice", "--base-url", "http://127.0.0.1:1/v1"},
		{"sweep", "--rates", "4,2", "--base-url", "http://127.0.0.1:1/v1"},
		{"sweep", "--slo-metric", "vibes", "--base-url", "http://127.0.0.1:1/v1"},
		{"sweep", "--preset", "tpu-v9", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--workload", "voice", "--concurrency", "3", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--workload", "voice", "--gap", "7s,5s", "--rate", "1", "--base-url", "http://127.0.0.1:1/v1"},
		{"sim", "--preset", "h100-80gb"},
		{"sim", "--print-config", "nope"},
		{"run", "--rate", "0", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--concurrency", "0", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--requests", "0", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--rate", "NaN", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--rate", "+Inf", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--input-tokens", "999999999", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--concurrency", "2000000000", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--retries", "1000", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--request-timeout", "-1s", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--base-url", "127.0.0.1:8000/v1"},
		{"run", "--base-url", "http://127.0.0.1:8000/v1/chat/completions"},
		{"run", "--base-url", "ftp://127.0.0.1:8000/v1"},
		{"run", "--workload", "voice", "--rate", "0", "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--extra-body", `{"stream": false}`, "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--extra-body", `{"model": "x"}`, "--base-url", "http://127.0.0.1:1/v1"},
		{"run", "--output", "-", "--records", "-", "--base-url", "http://127.0.0.1:1/v1"},
	}
	for _, args := range cases {
		code, _, errOut := execute(t, args...)
		if code != ExitUsage {
			t.Errorf("knee %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), code, ExitUsage, errOut)
		}
		if lines := strings.Count(strings.TrimSpace(errOut), "\n"); lines != 0 || !strings.HasPrefix(errOut, "knee: ") {
			t.Errorf("knee %s: stderr %q, want one line starting with \"knee: \"", strings.Join(args, " "), errOut)
		}
	}
}

// TestBaseURLHints: each common mistake in --base-url gets a hint at the
// fix, not just a failure.
func TestBaseURLHints(t *testing.T) {
	t.Parallel()
	inBubble(t, testBaseURLHints)
}

func testBaseURLHints(t *testing.T) {
	url := startSim(t, "", "")
	root := strings.TrimSuffix(url, "/v1")
	for _, tc := range []struct{ base, want string }{
		{strings.TrimPrefix(url, "http://"), "try http://"},
		{url + "/chat/completions", "give the API root instead: " + url},
		{root, "try --base-url " + root + "/v1"},
	} {
		_, _, errOut := execute(t, "run", "--base-url", tc.base, "--requests", "1")
		if !strings.Contains(errOut, tc.want) {
			t.Errorf("--base-url %s: stderr %q, want a hint containing %q", tc.base, errOut, tc.want)
		}
	}
}

// TestRunAgainstSimulator runs knee run end to end and checks the summary,
// the JSON file and that the API key is never written.
func TestRunAgainstSimulator(t *testing.T) {
	t.Parallel()
	inBubble(t, testRunAgainstSimulator)
}

func testRunAgainstSimulator(t *testing.T) {
	url := startSim(t, "", "sekrit-key")
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := execute(t, "run", "--base-url", url, "--api-key", "sekrit-key", "--model", "knee-sim-instant",
		"--concurrency", "4", "--requests", "40", "--max-tokens", "16", "--input-tokens", "64",
		"--header", "X-Trace:abc", "--header", "X-Api-Key:sekrit-key", "--output", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"TTFT sched", "queue wait", "40 ok", "client "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	raw, _ := os.ReadFile(out)
	if bytes.Contains(raw, []byte("sekrit")) || strings.Contains(stdout, "sekrit") {
		t.Error("the API key leaked into the output or the JSON file")
	}
	res, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests.OK != 40 || res.Tokens.OutputTotal != 40*16 || res.Config.APIKey != results.Redacted {
		t.Errorf("requests %+v, output tokens %d, api key %q", res.Requests, res.Tokens.OutputTotal, res.Config.APIKey)
	}
	var generic map[string]any
	json.Unmarshal(raw, &generic)
	stats := generic["stats"].(map[string]any)
	for _, k := range []string{"ttft", "ttft_sched", "itl", "tpot", "e2e", "e2e_sched", "queue_wait"} {
		m, ok := stats[k].(map[string]any)
		if !ok {
			t.Errorf("stats.%s missing", k)
			continue
		}
		for _, f := range []string{"mean", "min", "p50", "p90", "p95", "p99", "max"} {
			if _, ok := m[f]; !ok {
				t.Errorf("stats.%s.%s missing", k, f)
			}
		}
	}
	for _, k := range []string{"requests", "throughput", "arrivals", "health", "schema_version", "config", "environment"} {
		if _, ok := generic[k]; !ok {
			t.Errorf("%s missing from the JSON", k)
		}
	}
}

func TestEveryRequestFailedExitsOne(t *testing.T) {
	t.Parallel()
	inBubble(t, testEveryRequestFailedExitsOne)
}

func testEveryRequestFailedExitsOne(t *testing.T) {
	url := startSim(t, "", "")
	code, stdout, _ := execute(t, "run", "--base-url", url, "--header", "X-Knee-Fault:error_500", "--concurrency", "2", "--requests", "4")
	if code != ExitFailed {
		t.Errorf("exit %d, want 1\n%s", code, stdout)
	}
	if !strings.Contains(stdout, "http_500:") || !strings.Contains(stdout, " 4") {
		t.Errorf("errors not reported by class:\n%s", stdout)
	}
}

// TestUnknownModelIsAUsageError: --model is checked against GET /v1/models
// before anything is measured, and the error lists what is served.
func TestUnknownModelIsAUsageError(t *testing.T) {
	t.Parallel()
	inBubble(t, testUnknownModelIsAUsageError)
}

func testUnknownModelIsAUsageError(t *testing.T) {
	url := startSim(t, "", "")
	code, _, errOut := execute(t, "run", "--base-url", url, "--model", "no-such-model", "--requests", "2")
	if code != ExitUsage || !strings.Contains(errOut, "no-such-model") || !strings.Contains(errOut, "it serves:") {
		t.Errorf("exit %d, stderr %q; want a usage error listing the served models", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, out, _ := execute(t, "version")
	if code != 0 || !strings.HasPrefix(out, "knee ") {
		t.Errorf("version: %d %q", code, out)
	}
	code, out, _ = execute(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: exit %d", code)
	}
}

// TestServerViewOfSimulator: the client, server and simulated columns are
// consistent, and the reset after warm-up keeps warm-up requests out of the
// server's count.
func TestServerViewOfSimulator(t *testing.T) {
	t.Parallel()
	inBubble(t, testServerViewOfSimulator)
}

func testServerViewOfSimulator(t *testing.T) {
	url := startSim(t, "", "")
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := execute(t, "run", "--base-url", url, "--model", "knee-sim-fixed", "--concurrency", "4",
		"--requests", "40", "--warmup", "8", "--max-tokens", "20", "--output", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	res, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Server
	if s == nil || s.Source != "knee-sim" {
		t.Fatalf("no simulator view: %+v", s)
	}
	if s.Requests != 40 {
		t.Errorf("the server counted %d requests, want the 40 measured (warm-up excluded by the reset)", s.Requests)
	}
	ttft := func(name string) results.Figure {
		for _, f := range s.Figures {
			if f.Name == name {
				return f
			}
		}
		t.Fatalf("no %s figure", name)
		return results.Figure{}
	}
	f := ttft("TTFT p50")
	if *f.Server < *f.Simulated-0.001 {
		t.Errorf("server TTFT p50 %.2f ms < simulated %.2f ms", *f.Server, *f.Simulated)
	}
	// Delivery (client − server) at the median: loopback and parsing cost
	// well under a few ms; it may dip just below zero by timer rounding.
	if *f.Delivery < -0.5 || *f.Delivery > 5 {
		t.Errorf("TTFT p50 delivery %.2f ms, want small and non-negative", *f.Delivery)
	}
	if s.Lag == nil || s.Lag.Count == 0 {
		t.Error("no token lag in the fidelity figures")
	}
	if !strings.Contains(stdout, "fidelity") || !strings.Contains(stdout, "delivery") {
		t.Errorf("the report lacks the comparison:\n%s", stdout)
	}
}

// TestCompletionsEndpoint drives /v1/completions with a dataset.
func TestCompletionsEndpoint(t *testing.T) {
	t.Parallel()
	inBubble(t, testCompletionsEndpoint)
}

func testCompletionsEndpoint(t *testing.T) {
	url := startSim(t, "", "")
	ds := filepath.Join(t.TempDir(), "ds.jsonl")
	os.WriteFile(ds, []byte("{\"prompt\": \"one\", \"max_tokens\": 5}\n{\"prompt\": \"two\"}\n"), 0o644)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := execute(t, "run", "--base-url", url, "--model", "knee-sim-instant", "--endpoint", "completions",
		"--dataset", ds, "--max-tokens", "7", "--concurrency", "2", "--requests", "10", "--output", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	res, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	// Requests alternate 5 and 7 tokens (the dataset's max_tokens, else the flag).
	if res.Requests.OK != 10 || res.Tokens.OutputTotal != 5*5+5*7 {
		t.Errorf("ok %d, output tokens %d; want 10 and 60", res.Requests.OK, res.Tokens.OutputTotal)
	}
}
