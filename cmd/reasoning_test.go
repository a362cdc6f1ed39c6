package cmd

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// reasoningModels is a fixed-rate model (10 ms a token) that thinks for 20
// tokens before it answers, in vLLM's newer field, reporting them in usage.
const reasoningModels = `
models:
  - name: thinker
    context_length: 4096
    engine: fixed_rate
    fixed_rate: {overhead_ms: 20, prefill_tokens_per_second: 100000, decode_tokens_per_second: 100}
    reasoning: {tokens: 20, field: reasoning, report_tokens: true}
`

// TestReasoningModelAgainstSim: knee sim's reasoning model read by the
// client: 20 reasoning and 20 answer tokens a request from the server's
// usage; with max_tokens under the thinking, no answer
// comes, the run says the budget was spent on thought, and TTFAT counts
// nothing.
func TestReasoningModelAgainstSim(t *testing.T) {
	t.Parallel()
	inBubble(t, testReasoningModelAgainstSim)
}

func testReasoningModelAgainstSim(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", reasoningModels), "")
	out := filepath.Join(dir, "run.json")
	code, stdout, errOut := execute(t, "run", "--base-url", url, "--model", "thinker", "--concurrency", "2", "--requests", "10",
		"--max-tokens", "40", "--input-tokens", "64", "--no-server-metrics", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	r, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	rs := r.Reasoning
	if rs == nil || rs.Requests != 10 || rs.NoAnswer != 0 || rs.Source != "usage" || rs.ReasoningPerRequest.P50 != 20 || rs.AnswerPerRequest.P50 != 20 {
		t.Fatalf("reasoning %+v; want 10 requests of 20 reasoning and 20 answer tokens, from usage", rs)
	}
	if rs.ITLAnswer.Count != 10*19 {
		t.Errorf("ITL over answer tokens: %d gaps, want 190 (19 a request)", rs.ITLAnswer.Count)
	}
	if !strings.Contains(stdout, "reasoning 10 requests reasoned") || !strings.Contains(stdout, "TTFAT (first answer token)") {
		t.Errorf("the terminal does not show the reasoning:\n%s", stdout)
	}

	code, stdout, errOut = execute(t, "run", "--base-url", url, "--model", "thinker", "--concurrency", "2", "--requests", "4",
		"--max-tokens", "10", "--input-tokens", "64", "--no-server-metrics", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	if r, err = results.ReadRun(out); err != nil {
		t.Fatal(err)
	}
	if rs := r.Reasoning; rs == nil || rs.NoAnswer != 4 || rs.BudgetSpent != 4 || r.Stats.TTFAT.Count != 0 {
		t.Fatalf("reasoning %+v, TTFAT n=%d; want 4 without an answer, their budget spent", rs, r.Stats.TTFAT.Count)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "raise --max-tokens") {
		t.Errorf("no warning says the budget went on thought: %q", r.Warnings)
	}

	// Two shards merge into one account: counts summed, distributions
	// from the merged histograms.
	var shards []string
	for i := range 2 {
		f := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		code, stdout, errOut := execute(t, "run", "--base-url", url, "--model", "thinker", "--concurrency", "2", "--requests", "6",
			"--max-tokens", "40", "--input-tokens", "64", "--no-server-metrics", "--shard", fmt.Sprintf("%d/2", i), "-o", f, "--quiet")
		if code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, errOut)
		}
		shards = append(shards, f)
	}
	merged := filepath.Join(dir, "merged.json")
	if code, stdout, errOut := execute(t, append(append([]string{"merge"}, shards...), "-o", merged)...); code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, errOut)
	}
	if r, err = results.ReadRun(merged); err != nil {
		t.Fatal(err)
	}
	if rs := r.Reasoning; rs == nil || rs.Requests != 6 || rs.ReasoningTotal != 120 || rs.ReasoningPerRequest.P50 != 20 || r.Stats.TTFAT.Count != 6 {
		t.Errorf("merged reasoning %+v, TTFAT n=%d; want 6 requests of 20 reasoning tokens", rs, r.Stats.TTFAT.Count)
	}
}

// TestReasoningModelPredicted: knee predict on a preset that thinks for
// 50 tokens: the first answer token comes 50 decode steps after the first
// token (within 5%), every request reasoned 50 tokens and answered 50.
func TestReasoningModelPredicted(t *testing.T) {
	dir := t.TempDir()
	models := writeFile(t, dir, "models.yml", "models:\n  - name: thinker\n    preset: h100-80gb/llama-3.1-8b\n    reasoning: {tokens: 50, report_tokens: true}\n")
	code, stdout, errOut := execute(t, "predict", "--sim-models", models, "--rates", "4", "--step-duration", "30s", "--input-tokens", "256",
		"--max-tokens", "100", "--out-dir", dir, "--label", "p")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "p.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := sw.Levels[0].Run
	rs := r.Reasoning
	if rs == nil || rs.Requests == 0 || rs.Requests != r.Requests.OK || rs.ReasoningPerRequest.P50 != 50 || rs.AnswerPerRequest.P50 != 50 || rs.Source != "usage" {
		t.Fatalf("reasoning %+v of %d ok; want every request 50 + 50 tokens, from usage", rs, r.Requests.OK)
	}
	gap := r.Stats.TTFAT.P50 - r.Stats.TTFT.P50
	if want := 50 * r.Stats.ITL.P50; math.Abs(gap-want) > 0.05*want {
		t.Errorf("predicted TTFAT - TTFT = %.1f ms, want 50 × ITL = %.1f ms within 5%%", gap, want)
	}
}

// TestReasoningTimingAgainstSim: the first answer token comes the
// thinking's 20 tokens of 10 ms after the first token (within 5%), and the
// answer's tokens come at the pace of all.
func TestReasoningTimingAgainstSim(t *testing.T) {
	t.Parallel()
	inBubble(t, testReasoningTimingAgainstSim)
}

func testReasoningTimingAgainstSim(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", reasoningModels), "")
	out := filepath.Join(dir, "run.json")
	code, stdout, errOut := execute(t, "run", "--base-url", url, "--model", "thinker", "--concurrency", "2", "--requests", "10",
		"--max-tokens", "40", "--input-tokens", "64", "--no-server-metrics", "--quiet", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	r, err := results.ReadRun(out)
	if err != nil || r.Reasoning == nil {
		t.Fatalf("%v; reasoning %+v", err, r.Reasoning)
	}
	gap := r.Stats.TTFAT.P50 - r.Stats.TTFT.P50
	if want := 20 * r.Stats.ITL.P50; math.Abs(gap-want) > 0.05*want {
		t.Errorf("TTFAT - TTFT = %.1f ms, want 20 × ITL = %.1f ms within 5%%", gap, want)
	}
	// A fixed rate decodes answer and thought alike.
	if a, all := r.Reasoning.ITLAnswer, r.Stats.ITL; math.Abs(a.P50-all.P50) > 0.2*all.P50 {
		t.Errorf("ITL over answer tokens p50 %.2f ms; want near the %.2f ms of all", a.P50, all.P50)
	}
}

// writeFile writes text to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestThinkingBudgetKnobs: the request's reasoning_effort picks the
// thinking knee sim's model does (efforts low 5, high 30), and
// enable_thinking=false in chat_template_kwargs turns it off, as Qwen3's
// template does.
func TestThinkingBudgetKnobs(t *testing.T) {
	t.Parallel()
	inBubble(t, testThinkingBudgetKnobs)
}

func testThinkingBudgetKnobs(t *testing.T) {
	dir := t.TempDir()
	spec := strings.Replace(reasoningModels, "reasoning: {tokens: 20,", "reasoning: {tokens: 20, efforts: {low: 5, high: 30},", 1)
	url := startSim(t, writeFile(t, dir, "models.yml", spec), "")
	for _, c := range []struct {
		flags []string
		want  float64 // reasoning tokens a request; 0: none reasoned
	}{
		{[]string{"--reasoning-effort", "low"}, 5},
		{[]string{"--reasoning-effort", "high"}, 30},
		{[]string{"--reasoning-effort", "medium"}, 20},
		{[]string{"--chat-template-kwarg", "enable_thinking=false"}, 0},
	} {
		out := filepath.Join(dir, "run.json")
		args := append([]string{"run", "--base-url", url, "--model", "thinker", "--concurrency", "1", "--requests", "2",
			"--max-tokens", "40", "--input-tokens", "32", "--no-server-metrics", "--quiet", "-o", out}, c.flags...)
		if code, stdout, errOut := execute(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", c.flags, code, stdout, errOut)
		}
		r, err := results.ReadRun(out)
		if err != nil {
			t.Fatal(err)
		}
		got := 0.0
		if r.Reasoning != nil {
			got = r.Reasoning.ReasoningPerRequest.P50
		}
		if got != c.want || r.Stats.TTFAT.Count != 2 {
			t.Errorf("%v: %g reasoning tokens a request, TTFAT n=%d; want %g and 2", c.flags, got, r.Stats.TTFAT.Count, c.want)
		}
	}
}

// TestThinkingSpread: a reasoning model's spread draws each answer's
// thought from tokens ± spread, live and predicted alike: every request
// within the range, the answers not all alike, the median near tokens.
func TestThinkingSpread(t *testing.T) {
	t.Parallel()
	inBubble(t, testThinkingSpread)
}

func testThinkingSpread(t *testing.T) {
	dir := t.TempDir()
	spec := "models:\n  - name: thinker\n    preset: h100-80gb/llama-3.1-8b\n    reasoning: {tokens: 50, spread: 20, report_tokens: true}\n"
	models := writeFile(t, dir, "models.yml", spec)
	check := func(what string, rs *results.Reasoning) {
		t.Helper()
		if rs == nil || rs.ReasoningPerRequest.Min < 30 || rs.ReasoningPerRequest.Max > 70 || rs.ReasoningPerRequest.Max-rs.ReasoningPerRequest.Min < 20 ||
			math.Abs(rs.ReasoningPerRequest.P50-50) > 8 {
			t.Errorf("%s: reasoning per request %+v; want 50 ± 20, spread out", what, rs)
		}
	}
	code, stdout, errOut := execute(t, "predict", "--sim-models", models, "--rates", "4", "--step-duration", "30s", "--input-tokens", "128",
		"--max-tokens", "120", "--out-dir", dir, "--label", "p")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "p.json"))
	if err != nil {
		t.Fatal(err)
	}
	check("predicted", sw.Levels[0].Run.Reasoning)
	url := startSim(t, writeFile(t, dir, "live.yml", strings.Replace(spec, "preset: h100-80gb/llama-3.1-8b", "context_length: 4096\n    engine: instant", 1)), "")
	r := runJSON(t, "run", "--base-url", url, "--model", "thinker", "--requests", "60", "--concurrency", "4", "--input-tokens", "64",
		"--max-tokens", "120", "--no-server-metrics")
	check("live", r.Reasoning)
}
