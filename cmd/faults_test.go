package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
)

// runJSON runs knee run with args plus --output and returns the result.
func runJSON(t *testing.T, args ...string) *results.Run {
	t.Helper()
	r, _ := runOutput(t, args...)
	return r
}

// runOutput is runJSON with what the run printed.
func runOutput(t *testing.T, args ...string) (*results.Run, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := execute(t, append(args, "--output", out)...)
	if code != 0 && code != ExitFailed {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	res, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	return res, stdout
}

// TestFaultsByHeader injects each kind with X-Knee-Fault and checks that the
// bench counts it under its own class, and that partial streams never pass
// for successes.
func TestFaultsByHeader(t *testing.T) {
	t.Parallel()
	inBubble(t, testFaultsByHeader)
}

func testFaultsByHeader(t *testing.T) {
	url := startSim(t, "testdata/faults.yml", "")
	cases := []struct{ kind, class string }{
		{"error_429", "http_429:rate_limit_error"},
		{"error_500", "http_500:server_error"},
		{"error_503", "http_503:server_error"},
		{"error_401", "http_401:authentication_error"},
		{"context_length", "http_400:invalid_request_error"},
		{"cut", "truncated_stream"},
		{"stall", "idle_timeout"},
	}
	for _, tc := range cases {
		res := runJSON(t, "run", "--base-url", url, "--model", "fixed", "--concurrency", "2", "--requests", "6", "--warmup", "0",
			"--max-tokens", "10", "--timeout", "500ms", "--header", "X-Knee-Fault:"+tc.kind, "--no-server-metrics")
		if res.Requests.Errors[tc.class] != 6 || res.Requests.OK != 0 {
			t.Errorf("%s: errors %v ok %d, want 6 × %s", tc.kind, res.Requests.Errors, res.Requests.OK, tc.class)
		}
		if tc.kind == "cut" && res.Requests.PartialTokens != 6*3 {
			t.Errorf("cut after 3 tokens: %d partial tokens, want 18", res.Requests.PartialTokens)
		}
	}
	// A latency spike multiplies time to first token (here 20 ms × 10).
	res := runJSON(t, "run", "--base-url", url, "--model", "fixed", "--concurrency", "2", "--requests", "4", "--warmup", "0",
		"--max-tokens", "4", "--header", "X-Knee-Fault:spike", "--no-server-metrics")
	if res.Requests.OK != 4 || res.Stats.TTFT.P50 < 190 {
		t.Errorf("spike: ok %d TTFT p50 %.1f ms, want 4 ok near 200 ms", res.Requests.OK, res.Stats.TTFT.P50)
	}
}

// classesByPrompt maps each request's index to its outcome from a records
// file.
func classesByPrompt(t *testing.T, path string) map[int]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Index int    `json:"index"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out[r.Index] = r.Error
	}
	return out
}

// TestFaultsByRateRepeat: 30% of requests get a 429, and the same seed
// and nonce give the same faults on the same requests in a fresh
// simulator.
func TestFaultsByRateRepeat(t *testing.T) {
	inBubble(t, testFaultsByRateRepeat)
}

func testFaultsByRateRepeat(t *testing.T) {
	// The same prompts too: each command draws its own nonce unless told.
	t.Setenv("KNEE_RUN_NONCE", "fa017e57")
	var runs []map[int]string
	for i := 0; i < 2; i++ {
		url := startSim(t, "testdata/faults.yml", "")
		records := filepath.Join(t.TempDir(), "rec.jsonl")
		res := runJSON(t, "run", "--base-url", url, "--model", "flaky", "--concurrency", "4", "--requests", "200", "--warmup", "0",
			"--max-tokens", "4", "--input-tokens", "20", "--records", records, "--no-server-metrics")
		// 200 draws at p = 0.3: mean 60, standard deviation 6.5; ±20 is
		// three standard deviations.
		if n := res.Requests.Errors["http_429:rate_limit_error"]; n < 40 || n > 80 {
			t.Errorf("run %d: %d 429s of 200, want 60 ± 20", i, n)
		}
		runs = append(runs, classesByPrompt(t, records))
	}
	same := 0
	for idx, class := range runs[0] {
		if runs[1][idx] == class {
			same++
		}
	}
	if same != len(runs[0]) {
		t.Errorf("%d of %d requests got the same outcome in a repeat run, want all", same, len(runs[0]))
	}
}

// TestRetriesReportFirstAttempts: with 30% injected 429s and --retries 2,
// first attempts fail about 30% of the time and final outcomes about
// 0.3³ = 2.7%.
func TestRetriesReportFirstAttempts(t *testing.T) {
	t.Parallel()
	inBubble(t, testRetriesReportFirstAttempts)
}

func testRetriesReportFirstAttempts(t *testing.T) {
	url := startSim(t, "testdata/faults.yml", "")
	// A fixed nonce fixes the prompts, and so which first attempts the
	// simulator's seeded draw fails: the figure is the same every run
	// (a run's own nonce made it a 3-sigma band that a run in ~300 missed).
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := executeCtx(t, bench.WithNonce(context.Background(), "retries"), "run", "--base-url", url, "--model", "flaky",
		"--concurrency", "8", "--requests", "300", "--warmup", "0", "--max-tokens", "4", "--input-tokens", "20", "--retries", "2",
		"--no-server-metrics", "--output", out)
	if code != 0 && code != ExitFailed {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	res, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	fa := res.Requests.FirstAttempt
	if fa == nil {
		t.Fatal("no first-attempt outcomes reported")
	}
	first := float64(fa.Failed) / float64(fa.OK+fa.Failed)
	final := res.Requests.ErrorRate()
	t.Logf("first-attempt error rate %.3f, final %.3f", first, final)
	if first < 0.22 || first > 0.38 {
		t.Errorf("first-attempt error rate %.3f, want 0.30 ± 0.08", first)
	}
	if final > 0.07 {
		t.Errorf("final error rate %.3f, want near 0 (expected 0.027)", final)
	}
	if fa.Retries < fa.Failed {
		t.Errorf("%d retries for %d failed first attempts", fa.Retries, fa.Failed)
	}
}

// TestOverloadSheds: a one-at-a-time engine with max_waiting 2 answers 429
// at once to requests beyond the queue, instead of letting them wait.
func TestOverloadSheds(t *testing.T) {
	t.Parallel()
	inBubble(t, testOverloadSheds)
}

func testOverloadSheds(t *testing.T) {
	url := startSim(t, "testdata/faults.yml", "")
	res := runJSON(t, "run", "--base-url", url, "--model", "busy", "--concurrency", "8", "--requests", "40", "--warmup", "0",
		"--max-tokens", "4", "--input-tokens", "50", "--no-server-metrics")
	shed := res.Requests.Errors["http_429:rate_limit_error"]
	if shed == 0 || res.Requests.OK == 0 {
		t.Errorf("ok %d, shed %d: want both", res.Requests.OK, shed)
	}
	if got := res.Requests.OK + res.Requests.Failed; got != 40 {
		t.Errorf("ok + failed = %d, want 40", got)
	}
}
