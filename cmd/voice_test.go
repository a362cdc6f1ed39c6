package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

func TestValidatePasses(t *testing.T) {
	t.Parallel()
	inBubble(t, testValidatePasses)
}

func testValidatePasses(t *testing.T) {
	url := startSim(t, "testdata/small-kv.yml", "")
	code, out, errOut := execute(t, "validate", "--base-url", url, "--model", "small-kv", "--system-prompt-tokens", "1000", "--gap", "50ms")
	if code != 0 || !strings.Contains(out, "OK: turn 2 reused the warm prefix") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestValidateFailsWithoutPrefixCaching(t *testing.T) {
	t.Parallel()
	inBubble(t, testValidateFailsWithoutPrefixCaching)
}

func testValidateFailsWithoutPrefixCaching(t *testing.T) {
	url := startSim(t, "testdata/small-kv.yml", "")
	code, out, _ := execute(t, "validate", "--base-url", url, "--model", "small-kv-nocache", "--system-prompt-tokens", "1000", "--gap", "50ms")
	if code != ExitFailed || !strings.Contains(out, "FAIL: turn 2 cached 0 of") || !strings.Contains(out, "prefix caching is off") {
		t.Errorf("exit %d, want 1 with the too-low diagnosis:\n%s", code, out)
	}
}

// noCacheServer answers like a server that never reports cached tokens.
func noCacheServer(t *testing.T) string {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	})
	return serveHTTP(t, h) + "/v1"
}

func TestValidateSaysCachedTokensAreMissing(t *testing.T) {
	t.Parallel()
	inBubble(t, testValidateSaysCachedTokensAreMissing)
}

func testValidateSaysCachedTokensAreMissing(t *testing.T) {
	code, out, _ := execute(t, "validate", "--base-url", noCacheServer(t), "--gap", "10ms")
	if code != ExitFailed || !strings.Contains(out, "does not report cached tokens") || !strings.Contains(out, "--enable-prompt-tokens-details") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// voiceLevel runs the voice workload at rate and returns its result.
func voiceLevel(t *testing.T, url string, rate float64, calls int) *results.Run {
	t.Helper()
	out := filepath.Join(t.TempDir(), "voice.json")
	code, stdout, stderr := execute(t, "run", "--workload", "voice", "--base-url", url, "--model", "small-kv",
		"--rate", fmt.Sprint(rate), "--calls", fmt.Sprint(calls), "--system-prompt-tokens", "1000", "--user-tokens", "20",
		"--turns", "4", "--gap", "300ms,500ms", "--output-tokens", "30", "--output", out)
	if code != 0 {
		t.Fatalf("rate %v: exit %d\n%s%s", rate, code, stdout, stderr)
	}
	res, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestVoiceCacheCollapsesWithLoad: at a low call rate every measured turn
// hits its warm prefix; at a high one more calls are in progress than the
// cache holds, eviction forces cold re-prefills, the hit rate falls and
// TTFT p95 rises.
func TestVoiceCacheCollapsesWithLoad(t *testing.T) {
	t.Parallel()
	inBubble(t, testVoiceCacheCollapsesWithLoad)
}

func testVoiceCacheCollapsesWithLoad(t *testing.T) {
	url := startSim(t, "testdata/small-kv.yml", "")
	low := voiceLevel(t, url, 1, 4)
	high := voiceLevel(t, url, 12, 24)
	t.Logf("low: hit %.3f cold %.2f TTFT p95 %.1f ms; high: hit %.3f cold %.2f TTFT p95 %.1f ms",
		low.Cache.HitRate, low.Cache.ColdShare, low.Stats.TTFTSched.P95, high.Cache.HitRate, high.Cache.ColdShare, high.Stats.TTFTSched.P95)
	if low.Cache.ColdShare != 0 || low.Cache.HitRate < 0.8 {
		t.Errorf("low rate: hit rate %.3f, cold share %.2f; want every turn warm", low.Cache.HitRate, low.Cache.ColdShare)
	}
	if high.Cache.HitRate >= low.Cache.HitRate-0.1 || high.Cache.ColdShare == 0 {
		t.Errorf("high rate: hit rate %.3f (low %.3f), cold share %.2f; want eviction", high.Cache.HitRate, low.Cache.HitRate, high.Cache.ColdShare)
	}
	if high.Stats.TTFTSched.P95 <= 2*low.Stats.TTFTSched.P95 {
		t.Errorf("TTFT p95 %.1f ms at high rate vs %.1f at low, want it to rise", high.Stats.TTFTSched.P95, low.Stats.TTFTSched.P95)
	}
	// Turn 1 never appears in the measured statistics.
	for _, r := range []*results.Run{low, high} {
		for _, bt := range r.ByTurn {
			if bt.Turn == 1 {
				t.Error("turn 1 appears in the per-turn breakdown")
			}
		}
		if want := 3 * r.Calls.Completed; r.Requests.OK != want {
			t.Errorf("%d measured turns for %d completed calls, want %d (turns 2–4 only)", r.Requests.OK, r.Calls.Completed, want)
		}
	}
}

// TestVoiceShedsPastTheCap: arrivals beyond --max-concurrent-calls are
// counted as shed, never silently dropped.
func TestVoiceShedsPastTheCap(t *testing.T) {
	t.Parallel()
	inBubble(t, testVoiceShedsPastTheCap)
}

func testVoiceShedsPastTheCap(t *testing.T) {
	url := startSim(t, "testdata/small-kv.yml", "")
	out := filepath.Join(t.TempDir(), "v.json")
	code, stdout, stderr := execute(t, "run", "--workload", "voice", "--base-url", url, "--model", "small-kv",
		"--rate", "20", "--calls", "20", "--system-prompt-tokens", "200", "--user-tokens", "10", "--turns", "2",
		"--gap", "200ms", "--output-tokens", "10", "--max-concurrent-calls", "2", "--output", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	res, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Calls
	if c.Shed == 0 || c.Started+c.Shed != 20 || !strings.Contains(stdout, "shed") {
		t.Errorf("started %d shed %d, want some shed and 20 in all", c.Started, c.Shed)
	}
}

// TestFailedCallsAreCounted: a call stops at its first failed turn. With
// 30% of requests refused, calls fail at their warm-up turn as at their
// measured ones, and every one is counted: started = completed + failed,
// the warm-up failures apart. Records name each turn's call, and a turn
// refused before the server counted its prompt has no prompt_tokens.
func TestFailedCallsAreCounted(t *testing.T) {
	t.Parallel()
	inBubble(t, testFailedCallsAreCounted)
}

func testFailedCallsAreCounted(t *testing.T) {
	url := startSim(t, "testdata/faults.yml", "")
	records := filepath.Join(t.TempDir(), "calls.jsonl")
	res := runJSON(t, "run", "--base-url", url, "--model", "flaky", "--workload", "voice", "--rate", "20", "--calls", "40",
		"--turns", "3", "--gap", "10ms", "--system-prompt-tokens", "200", "--output-tokens", "4", "--records", records, "--no-server-metrics")
	c := res.Calls
	if c.Started != 40 || c.Completed+c.Failed != c.Started || c.WarmupFailed == 0 || c.WarmupFailed >= c.Failed {
		t.Fatalf("calls %+v: want 40 started, each completed or failed, some failing at the warm-up turn and some later", c)
	}
	lines, err := os.ReadFile(records)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[int]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var r results.RecordLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Call == nil {
			t.Fatalf("a turn's record names no call: %s", l)
		}
		calls[*r.Call] = true
		if r.Error != "" && r.PromptTokens != nil {
			t.Errorf("a refused turn says %d prompt tokens: %s", *r.PromptTokens, l)
		}
	}
	if len(calls) != 40 {
		t.Errorf("records name %d calls, want 40", len(calls))
	}
}

// TestVoiceSweepKeepingUpIsNotSaturated: a live voice sweep against a
// simulator that keeps up reads no saturation, in a short and a long
// window. Gaps, window and rates are the README's 15 s and 45 s voice
// levels scaled down ten times (so the calls straddle the window's edges
// alike): before the caller's pauses were taken out of the turns' ages,
// these read 9–17% short and saturated.
func TestVoiceSweepKeepingUpIsNotSaturated(t *testing.T) {
	t.Parallel()
	inBubble(t, testVoiceSweepKeepingUpIsNotSaturated)
}

func testVoiceSweepKeepingUpIsNotSaturated(t *testing.T) {
	url := startSim(t, "", "")
	for _, step := range []string{"1.5s", "4.5s"} {
		dir := t.TempDir()
		code, out, errOut := execute(t, "sweep", "--base-url", url, "--model", "knee-sim-instant", "--workload", "voice",
			"--rates", "5,20", "--step-duration", step, "--gap", "500ms,700ms", "--system-prompt-tokens", "200",
			"--output-tokens", "20", "--seed", "6", "--out-dir", dir, "--label", "v", "--no-server-metrics")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", step, code, out, errOut)
		}
		s, err := results.ReadSweep(filepath.Join(dir, "v.json"))
		if err != nil {
			t.Fatal(err)
		}
		if k := s.Knees.Saturation; k != nil {
			t.Errorf("%s levels: saturation at %v calls/s on a simulator that keeps up", step, k.Load)
			for _, l := range s.Levels {
				t.Logf("%v/s: completion %.2f of %.2f turns/s over %d calls", l.Load, l.Run.Arrivals.CompletionRate, l.Run.Calls.TurnsOfferedPerS, l.Run.Calls.Started)
			}
		}
	}
}
