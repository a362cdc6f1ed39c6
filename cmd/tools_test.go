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
	r = run("--tools", "builtin")
	if tc := r.ToolCalls; tc == nil || tc.Requests < 8 || tc.Requests > 32 {
		t.Errorf("auto at share 0.5: tool calls %+v of 40", tc)
	}

	bfcl := writeFile(t, dir, "bfcl.json", `[{"name":"calculate_triangle_area","description":"Area of a triangle.","parameters":{"type":"dict","properties":{"base":{"type":"integer"},"height":{"type":"float"}},"required":["base","height"]}}]`)
	r = run("--tools", bfcl, "--tool-choice", "calculate_triangle_area")
	if r.ToolCalls == nil || r.ToolCalls.Requests != 40 {
		t.Errorf("BFCL file, named choice: tool calls %+v", r.ToolCalls)
	}

	// An input past its bound is a runtime error (exit 3), as for every
	// input; a missing file or one that is no tool list the user's.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--tool-choice", "required"}, ExitUsage, "--tool-choice required needs --tools"},
		{[]string{"--tools", "builtin", "--tool-choice", "get_time"}, ExitUsage, "names no tool of --tools"},
		{[]string{"--tools", "/dev/zero"}, ExitRuntime, "more than --tools can be"},
		{[]string{"--tools", writeFile(t, dir, "bad.json", `[{"name":"bad name"}]`)}, ExitUsage, "tool 1: name"},
		{[]string{"--tools", filepath.Join(dir, "none.json")}, ExitUsage, "none.json"},
	} {
		code, _, errOut := execute(t, append([]string{"run", "--base-url", url, "--model", "caller", "--requests", "1"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d saying %q", c.args, code, errOut, c.code, c.want)
		}
	}
}
