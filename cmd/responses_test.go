package cmd

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestResponsesEndpointAgainstSim: --endpoint responses against knee
// sim's thinker gives the figures chat gives for the same load: 20
// reasoning and 20 answer tokens a request read from the Responses usage,
// TTFT and ITL within noise of chat's, and the first answer token the
// thinking's 20 tokens after the first (within 5%). It judges live
// timing: a try whose client knee judged starved is measured again.
func TestResponsesEndpointAgainstSim(t *testing.T) {
	t.Parallel()
	inBubble(t, testResponsesEndpointAgainstSim)
}

func testResponsesEndpointAgainstSim(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", reasoningModels), "")
	runs := map[string]*results.Run{}
	for _, ep := range []string{"chat", "responses"} {
		out := filepath.Join(dir, ep+".json")
		code, stdout, errOut := execute(t, "run", "--base-url", url, "--model", "thinker", "--endpoint", ep, "--concurrency", "2", "--requests", "10",
			"--max-tokens", "40", "--input-tokens", "64", "--no-server-metrics", "--quiet", "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", ep, code, stdout, errOut)
		}
		r, err := results.ReadRun(out)
		if err != nil {
			t.Fatal(err)
		}
		runs[ep] = r
	}
	chat, resp := runs["chat"], runs["responses"]
	if rs := resp.Reasoning; resp.Requests.OK != 10 || rs == nil || rs.Source != "usage" || rs.ReasoningPerRequest.P50 != 20 || rs.AnswerPerRequest.P50 != 20 ||
		resp.Config.Endpoint != "responses" {
		t.Fatalf("responses: %d ok, reasoning %+v, endpoint %q; want 10 of 20 + 20 tokens from usage", resp.Requests.OK, rs, resp.Config.Endpoint)
	}
	for _, m := range []struct {
		name    string
		a, b    float64
		within  float64
		absolut float64 // ms of slack a busy host adds to a small figure
	}{
		{"TTFT p50", chat.Stats.TTFT.P50, resp.Stats.TTFT.P50, 0.2, 2},
		{"ITL p50", chat.Stats.ITL.P50, resp.Stats.ITL.P50, 0.1, 0.5},
		{"TTFAT p50", chat.Stats.TTFAT.P50, resp.Stats.TTFAT.P50, 0.1, 2},
	} {
		if math.Abs(m.a-m.b) > m.within*m.a+m.absolut {
			t.Errorf("%s: chat %.2f ms, responses %.2f ms; want within %.0f%%", m.name, m.a, m.b, 100*m.within)
		}
	}
	gap := resp.Stats.TTFAT.P50 - resp.Stats.TTFT.P50
	if want := 20 * resp.Stats.ITL.P50; math.Abs(gap-want) > 0.05*want {
		t.Errorf("responses: TTFAT - TTFT = %.1f ms, want 20 × ITL = %.1f ms within 5%%", gap, want)
	}
}

// TestServerHeldHistory: a multi-turn call over the Responses API with
// --history server names each answer as the next turn's
// previous_response_id and sends only the new message; knee sim then
// counts the same prompts as when the whole conversation is sent with
// the live answers (--history full --replay-live-history): the server
// holds what the client no longer sends. --history server replays the
// live answers by itself: they are what the server continues.
func TestServerHeldHistory(t *testing.T) {
	t.Parallel()
	inBubble(t, testServerHeldHistory)
}

func testServerHeldHistory(t *testing.T) {
	url := startSim(t, "", "")
	file := writeLines(t, "sessions.jsonl", []any{map[string]any{"session_id": "s1", "turns": []any{
		map[string]any{"role": "system", "text": "be terse"},
		map[string]any{"text": "first question"},
		map[string]any{"text": "second question", "delay": 10},
		map[string]any{"text": "third question", "delay": 10},
	}}})
	run := func(history string) *results.Run {
		return runJSON(t, "run", "--base-url", url, "--endpoint", "responses", "--history", history, "--replay-live-history="+strconv.FormatBool(history == "full"),
			"--dataset", file, "--rate", "5", "--calls", "1", "--no-server-metrics")
	}
	full, server := run("full"), run("server")
	if full.Requests.OK != 3 || server.Requests.OK != 3 || server.Config.History != "server" {
		t.Fatalf("ok: full %d, server %d (history %q); want 3 each", full.Requests.OK, server.Requests.OK, server.Config.History)
	}
	if full.Tokens.InputTotal != server.Tokens.InputTotal || full.Tokens.InputTotal == 0 {
		t.Errorf("prompt tokens: full history %d, server-held %d; want the same", full.Tokens.InputTotal, server.Tokens.InputTotal)
	}

	// Not over chat: previous_response_id is the Responses API's.
	code, _, errOut := execute(t, "run", "--base-url", url, "--history", "server", "--requests", "1")
	if code != ExitUsage || !strings.Contains(errOut, "--endpoint responses") {
		t.Errorf("--history server over chat: exit %d, %s", code, errOut)
	}
}
