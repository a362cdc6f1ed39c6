package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

func sampleRun() *results.Run {
	s := func(base float64) results.Summary {
		return results.Summary{Count: 200, Mean: base * 1.1, Min: base * 0.5, P50: base, P90: base * 1.5, P95: base * 1.8, P99: base * 2.5, Max: base * 4}
	}
	return &results.Run{
		SchemaVersion: results.SchemaVersion,
		Config: results.Config{BaseURL: "http://127.0.0.1:8080/v1", BuiltinSim: true, Model: "knee-sim", Endpoint: "chat",
			Workload: "synthetic", Mode: "open", Rate: 20, Burstiness: 1, MaxConcurrency: 64, MaxTokens: 128, InputTokens: 512, Seed: 1},
		WindowSeconds: 10.25,
		Stats:         results.Stats{TTFT: s(42.1), TTFTSched: s(45.3), ITL: s(7.2), TPOT: s(7.4), E2E: s(980), E2ESched: s(990), QueueWait: s(0.31)},
		Requests:      results.Requests{Sent: 205, OK: 200, Failed: 5, Errors: map[string]int64{"http_429:rate_limit_error": 3, "idle_timeout": 2}, Warmup: 64, PartialTokens: 17},
		Tokens:        results.Tokens{InputTotal: 102400, OutputTotal: 25600, CachedTotal: 51200, Input: results.Summary{P50: 512, Mean: 512}, Output: results.Summary{P50: 128, Mean: 128}, UsageReported: true, CachedReported: true},
		Throughput:    results.Throughput{RequestsPerS: 19.51, OutputTokensPerS: 2497.6, TotalTokensPerS: 12487.8},
		Arrivals:      results.Arrivals{TargetRate: 20, OfferedRate: 19.8, AchievedRate: 19.79, Waited: 3, LateSends: 1, SendLatenessP99Ms: 0.9},
		Health:        results.Health{TimerLagP50Ms: 0.08, TimerLagP99Ms: 1.1, TimerLagMaxMs: 2.3, CPUPercent: 14, GCPauseMs: 0.4, NumGC: 6, Verdict: results.VerdictHealthy},
		Warnings:      []string{"an example warning"},
	}
}

func TestRunGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Run(&b, sampleRun()); err != nil {
		t.Fatal(err)
	}
	golden(t, "run.golden", b.Bytes())
}

func TestRunGoldenClientLimited(t *testing.T) {
	r := sampleRun()
	r.Config.Mode, r.Config.Concurrency = "closed", 8
	r.Health.Verdict = results.VerdictClientLimited
	r.Health.Reasons = []string{"timer lateness p99 9.0 ms exceeds 5 ms"}
	var b bytes.Buffer
	if err := Run(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "run_client_limited.golden", b.Bytes())
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		d    int
		want string
	}{{1234567.891, 1, "1,234,567.9"}, {-9876, 0, "-9,876"}, {12, 2, "12.00"}, {999, 0, "999"}} {
		if got := num(tc.v, tc.d); got != tc.want {
			t.Errorf("num(%v, %d) = %q, want %q", tc.v, tc.d, got, tc.want)
		}
	}
}

func TestPresetsGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Presets(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "presets.golden", b.Bytes())
}

func TestValidationGolden(t *testing.T) {
	v := results.Validation{
		Turns: []results.ValidationTurn{
			{Turn: 1, PromptTokens: 18112, CachedReported: true, TTFTMs: 412.5},
			{Turn: 2, PromptTokens: 18230, CachedTokens: 17984, CachedReported: true, TTFTMs: 38.2},
		},
		OK: true, Verdict: "OK: turn 2 reused the warm prefix (cached 17,984 of 18,230 prompt tokens)",
	}
	var b bytes.Buffer
	if err := Validation(&b, v); err != nil {
		t.Fatal(err)
	}
	golden(t, "validation.golden", b.Bytes())
}

// TestRunShowsTheServersWords: a run's errors line is followed by each
// class's first message, and its page's errors fact holds them too.
func TestRunShowsTheServersWords(t *testing.T) {
	r := sampleRun()
	r.Requests.Errors = map[string]int64{"http_400:invalid_request_error": 7}
	r.Requests.ErrorMessages = map[string]string{"http_400:invalid_request_error": "The model m is not a multimodal model"}
	var b strings.Builder
	if err := Run(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `http_400:invalid_request_error said "The model m is not a multimodal model"`
	if !strings.Contains(b.String(), want) {
		t.Errorf("the terminal misses %s:\n%s", want, b.String())
	}
	facts := runFacts(r)
	if !slices.ContainsFunc(facts, func(f fact) bool { return f.Name == "errors" && strings.Contains(f.Value, want) }) {
		t.Errorf("the page's facts miss %s: %v", want, facts)
	}
}
