package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

const toolModels = `
models:
  - name: caller
    context_length: 4096
    engine: instant
    tools: {share: 0.5, argument_tokens: 8}
`

// TestToolCallsAgainstSim: --tools offers functions with every request
// and knee sim's caller answers with calls: with --tool-choice required
// every request calls, its 8 argument pieces counted as output; with
// auto about half do; a BFCL-style file (Python type names) is read; a
// choice naming no tool, a choice without tools and a file that is no
// tool list are refused before the first request.
func TestToolCallsAgainstSim(t *testing.T) {
	t.Parallel()
	inBubble(t, testToolCallsAgainstSim)
}

func testToolCallsAgainstSim(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", toolModels), "")
	run := func(extra ...string) *results.Run {
		return runJSON(t, append([]string{"run", "--base-url", url, "--model", "caller", "--concurrency", "2", "--requests", "40",
			"--max-tokens", "32", "--input-tokens", "32", "--no-server-metrics"}, extra...)...)
	}
	r := run("--tools", "builtin", "--tool-choice", "required")
	if tc := r.ToolCalls; r.Requests.OK != 40 || tc == nil || tc.Requests != 40 || tc.FinishToolCalls != 40 || tc.ArgumentChunks != 320 ||
		r.Tokens.Output.P50 != 8 || r.Config.Tools != "builtin" || r.Stats.TTFT.Count != 40 {
		t.Fatalf("required: %d ok, tool calls %+v, output p50 %v, tools %q", r.Requests.OK, r.ToolCalls, r.Tokens.Output.P50, r.Config.Tools)
	}
	withTools := r.Tokens.Input.P50
	r = run("--tools", "builtin")
	if tc := r.ToolCalls; tc == nil || tc.Requests < 8 || tc.Requests > 32 {
		t.Errorf("auto at share 0.5: tool calls %+v of 40", tc)
	}
	// The server reads the tools into the prompt: the four schemas are
	// about a hundred tokens by knee sim's count.
	if plain := run().Tokens.Input.P50; withTools < plain+50 {
		t.Errorf("prompt p50 %v tokens with the tools, %v without: the tools are not counted", withTools, plain)
	}

	bfcl := writeFile(t, dir, "bfcl.json", `[{"name":"calculate_triangle_area","description":"Area of a triangle.","parameters":{"type":"dict","properties":{"base":{"type":"integer"},"height":{"type":"float"}},"required":["base","height"]}}]`)
	r = run("--tools", bfcl, "--tool-choice", "calculate_triangle_area")
	if r.ToolCalls == nil || r.ToolCalls.Requests != 40 {
		t.Errorf("BFCL file, named choice: tool calls %+v", r.ToolCalls)
	}

	// An input past its bound is a runtime error (exit 3), as for every
	// input; a missing file or one that is no tool list the user's.
	// A BFCL file: each request offers its line's functions.
	bfclLines := writeFile(t, dir, "simple.json", `{"id": "simple_0", "question": [[{"role": "user", "content": "Find the area of a triangle with a base of 10 units and height of 5 units."}]], "function": [{"name": "calculate_triangle_area", "description": "Calculate the area of a triangle given its base and height.", "parameters": {"type": "dict", "properties": {"base": {"type": "integer"}, "height": {"type": "integer"}}, "required": ["base", "height"]}}]}
{"id": "simple_1", "question": [[{"role": "user", "content": "Calculate the factorial of 5 using math functions."}]], "function": [{"name": "math.factorial", "description": "Calculate the factorial of a given number.", "parameters": {"type": "dict", "properties": {"number": {"type": "integer"}}, "required": ["number"]}}]}
`)
	r = runJSON(t, "run", "--base-url", url, "--model", "caller", "--concurrency", "2", "--requests", "10", "--max-tokens", "32",
		"--dataset", bfclLines, "--tool-choice", "required", "--no-server-metrics")
	if r.Requests.OK != 10 || r.ToolCalls == nil || r.ToolCalls.Requests != 10 || r.Config.DatasetFormat != "bfcl" {
		t.Errorf("BFCL dataset: %d ok, tool calls %+v, format %q", r.Requests.OK, r.ToolCalls, r.Config.DatasetFormat)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--tool-choice", "required"}, ExitUsage, "--tool-choice required needs --tools"},
		{[]string{"--tools", "builtin", "--tool-choice", "get_time"}, ExitUsage, "names no tool of --tools"},
		{[]string{"--tools", "/dev/zero"}, ExitRuntime, "more than a file of tool schemas can be"},
		{[]string{"--tools", writeFile(t, dir, "bad.json", `[{"name":"bad name"}]`)}, ExitUsage, "tool 1: name"},
		{[]string{"--tools", filepath.Join(dir, "none.json")}, ExitRuntime, "--tools: open"},
	} {
		code, _, errOut := execute(t, append([]string{"run", "--base-url", url, "--model", "caller", "--requests", "1"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d saying %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// TestToolsAndEffortsPredicted: knee predict takes the same request
// shapes: --reasoning-effort picks the efforts' thinking, and a model
// that calls tools answers --tools --tool-choice required with calls of
// its argument tokens, counted as a live run counts them; over the
// Responses API as over chat.
func TestToolsAndEffortsPredicted(t *testing.T) {
	dir := t.TempDir()
	models := writeFile(t, dir, "models.yml", "models:\n  - name: agent\n    preset: h100-80gb/llama-3.1-8b\n"+
		"    reasoning: {tokens: 40, efforts: {low: 10}, report_tokens: true}\n    tools: {share: 1, argument_tokens: 12}\n")
	predictRun := func(label string, extra ...string) *results.Run {
		args := append([]string{"predict", "--sim-models", models, "--rates", "4", "--step-duration", "20s", "--input-tokens", "128",
			"--max-tokens", "100", "--out-dir", dir, "--label", label}, extra...)
		if code, stdout, errOut := execute(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", extra, code, stdout, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return sw.Levels[0].Run
	}
	r := predictRun("low", "--reasoning-effort", "low")
	plain := r.Tokens.Input.P50
	if rs := r.Reasoning; rs == nil || rs.ReasoningPerRequest.P50 != 10 || r.ToolCalls != nil {
		t.Errorf("--reasoning-effort low: reasoning %+v, tool calls %+v; want 10 tokens a request and no calls", rs, r.ToolCalls)
	}
	for _, ep := range []string{"chat", "responses"} {
		r = predictRun("tools-"+ep, "--endpoint", ep, "--tools", "builtin", "--tool-choice", "required", "--chat-template-kwarg", "enable_thinking=false")
		if tc := r.ToolCalls; r.Requests.OK == 0 || tc == nil || tc.Requests != r.Requests.OK || tc.ArgumentChunks != 12*tc.Requests ||
			r.Tokens.Output.P50 != 12 || r.Reasoning != nil {
			t.Errorf("%s: %d ok, tool calls %+v, output p50 %v, reasoning %+v; want every request a call of 12 tokens, no thought", ep, r.Requests.OK, tc, r.Tokens.Output.P50, r.Reasoning)
		}
		if r.Tokens.Input.P50 < plain+50 {
			t.Errorf("%s: predicted prompt p50 %v tokens with the tools, %v without", ep, r.Tokens.Input.P50, plain)
		}
	}
	code, _, errOut := execute(t, "predict", "--sim-models", models, "--rates", "4", "--chat-template-kwarg", "foo=1", "--out-dir", dir)
	if code != ExitUsage || !strings.Contains(errOut, "only enable_thinking") {
		t.Errorf("--chat-template-kwarg foo=1 in predict: exit %d, %s", code, errOut)
	}
}

// TestToolLoopInCalls: a multi-turn call whose answers call a tool gets
// the canned result back in the same turn (--tool-rounds 1), and the
// model, given it, answers in words: each of the two turns is two
// requests, a call then an answer, over chat and over the Responses API
// with the history held by the server; with --tool-rounds 0 a call ends
// its turn.
func TestToolLoopInCalls(t *testing.T) {
	t.Parallel()
	inBubble(t, testToolLoopInCalls)
}

func testToolLoopInCalls(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", strings.Replace(toolModels, "share: 0.5", "share: 1", 1)), "")
	file := writeLines(t, "sessions.jsonl", []any{map[string]any{"session_id": "s1", "turns": []any{
		map[string]any{"text": "What is the weather in Paris?"},
		map[string]any{"text": "And in Rome?", "delay": 10},
	}}})
	for _, c := range []struct {
		args          []string
		ok, toolCalls int64
	}{
		{nil, 4, 2},
		{[]string{"--endpoint", "responses"}, 4, 2},
		{[]string{"--endpoint", "responses", "--history", "server"}, 4, 2},
		{[]string{"--tool-rounds", "0"}, 2, 2},
	} {
		args := append([]string{"run", "--base-url", url, "--model", "caller", "--dataset", file, "--rate", "5", "--calls", "1",
			"--tools", "builtin", "--max-tokens", "16", "--no-server-metrics"}, c.args...)
		r := runJSON(t, args...)
		if r.Requests.OK != c.ok || r.Requests.Failed != 0 || r.ToolCalls == nil || r.ToolCalls.Requests != c.toolCalls {
			t.Errorf("%v: %d ok, %d failed (%v), tool calls %+v; want %d ok, %d calls", c.args, r.Requests.OK, r.Requests.Failed, r.Requests.Errors, r.ToolCalls, c.ok, c.toolCalls)
		}
	}
}

// TestPlanWithReasoningAndTools: knee plan's candidates think
// (--reasoning-tokens) and call tools (--tools, --tool-calls): the SLO
// bounds the first answer token, which comes the thinking's decode steps
// after the first token, so a plan holding TTFAT under a bound needs at
// least the replicas of one that thinks nothing; a --tool-calls without
// --tools is refused.
func TestPlanWithReasoningAndTools(t *testing.T) {
	dir := t.TempDir()
	plan := func(label string, extra ...string) results.PlanRow {
		args := append([]string{"plan", "--rate", "6", "--input-tokens", "256", "--max-tokens", "300", "--slo", "ttfat_p95:3000",
			"--gpus", "h100-80gbx1", "--models", "llama-3.1-8b", "--routing", "round-robin", "--window", "1m", "--out-dir", dir, "--label", label}, extra...)
		code, out, errOut := execute(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", extra, code, out, errOut)
		}
		p := &results.Plan{}
		if err := readJSON(filepath.Join(dir, label+".json"), p); err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Rows {
			if r.Meets {
				return r
			}
		}
		t.Fatalf("%v: no configuration meets the SLO\n%s", extra, out)
		return results.PlanRow{}
	}
	plain := plan("plain")
	thinking := plan("thinking", "--reasoning-tokens", "200", "--tools", "builtin", "--tool-calls", "0.5:24")
	if thinking.AtTarget == nil || thinking.AtTarget.Bounds["ttfat_p95:3000"] > 3000 || thinking.Replicas < plain.Replicas ||
		thinking.AtTarget.Bounds["ttfat_p95:3000"] <= plain.AtTarget.Bounds["ttfat_p95:3000"] {
		t.Errorf("thinking %d replicas, TTFAT p95 %v; without thought %d, %v", thinking.Replicas, thinking.AtTarget, plain.Replicas, plain.AtTarget)
	}
	code, _, errOut := execute(t, "plan", "--rate", "6", "--tool-calls", "0.5:24", "--out-dir", dir)
	if code != ExitUsage || !strings.Contains(errOut, "needs --tools") {
		t.Errorf("--tool-calls without --tools: exit %d, %s", code, errOut)
	}
}

// TestCalibrateRefusesToolCalls: a run whose answers called tools is not
// fitted: the replay would ask for the lengths the run asked for, which
// the calls cut short.
func TestCalibrateRefusesToolCalls(t *testing.T) {
	t.Parallel()
	inBubble(t, testCalibrateRefusesToolCalls)
}

func testCalibrateRefusesToolCalls(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", toolModels), "")
	out := filepath.Join(dir, "run.json")
	if code, stdout, errOut := execute(t, "run", "--base-url", url, "--model", "caller", "--requests", "4", "--concurrency", "1",
		"--tools", "builtin", "--tool-choice", "required", "--no-server-metrics", "--quiet", "-o", out); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	code, _, errOut := execute(t, "calibrate", out, "--sim-preset", "h100-80gb/llama-3.1-8b")
	if code != ExitUsage || !strings.Contains(errOut, "called tools") {
		t.Errorf("calibrate on a run with tool calls: exit %d, %s", code, errOut)
	}
}
