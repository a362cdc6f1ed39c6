package cmd

import (
	"math"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestPackedReasoningCountedByText: a server that packs several tokens
// into an event (knee sim under stream_interval 4, as llama-server and
// vLLM do) and reports no reasoning_tokens: knee splits its completion
// count by the text each part streamed, not one token an event, says
// so, and gives no answer tokens to a request whose budget went on
// thought.
func TestPackedReasoningCountedByText(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		dir := t.TempDir()
		url, _ := simOfModels(t, dir, "r", "models:\n  - name: r\n    preset: h100-80gb/llama-3.1-8b\n    stream_interval: 4\n    reasoning: {tokens: 40}\n")
		run := func(maxTokens string) *results.Run {
			return runJSON(t, "run", "--base-url", url, "--model", "r", "--concurrency", "2", "--requests", "20",
				"--duration", "0", "--input-tokens", "100", "--max-tokens", maxTokens)
		}
		r := run("100")
		rs := r.Reasoning
		if rs == nil || rs.Source != "text" {
			t.Fatalf("reasoning %+v: want counted from text", rs)
		}
		// 40 thought tokens a request; events of four held 10 and the
		// chunk count would say 10 (or 11).
		if m := rs.ReasoningPerRequest.Mean; math.Abs(m-40) > 3 {
			t.Errorf("reasoning per request mean %.1f tokens, want about 40 (the server's)", m)
		}
		if rs.ReasoningTotal+rs.AnswerTotal != r.Tokens.OutputTotal {
			t.Errorf("reasoning %d + answer %d tokens, the server counted %d", rs.ReasoningTotal, rs.AnswerTotal, r.Tokens.OutputTotal)
		}
		spent := run("30").Reasoning
		if spent == nil || spent.NoAnswer != spent.Requests || spent.AnswerTotal != 0 {
			t.Errorf("every budget went on thought, yet %+v", spent)
		}
	})
}

// TestPackedReasoningCountedByTokenizer: with --tokenizer the two parts'
// text is counted with it, and the server's count split by those tokens:
// said so ("tokenizer"), and with every part a word the simulator's
// 40 thought tokens come back whole.
func TestPackedReasoningCountedByTokenizer(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		dir := t.TempDir()
		url, _ := simOfModels(t, dir, "r", "models:\n  - name: r\n    preset: h100-80gb/llama-3.1-8b\n    stream_interval: 4\n    reasoning: {tokens: 40}\n")
		r := runJSON(t, "run", "--base-url", url, "--model", "r", "--concurrency", "2", "--requests", "20",
			"--duration", "0", "--input-tokens", "100", "--max-tokens", "100", "--tokenizer", "../workload/testdata/tokenizer.json")
		rs := r.Reasoning
		if rs == nil || rs.Source != "tokenizer" {
			t.Fatalf("reasoning %+v: want counted with the tokenizer", rs)
		}
		t.Logf("reasoning per request mean %.2f, answer %.2f", rs.ReasoningPerRequest.Mean, rs.AnswerPerRequest.Mean)
		if m := rs.ReasoningPerRequest.Mean; math.Abs(m-40) > 1 {
			t.Errorf("reasoning per request mean %.1f tokens, want 40 (the server's)", m)
		}
		if rs.ReasoningTotal+rs.AnswerTotal != r.Tokens.OutputTotal {
			t.Errorf("reasoning %d + answer %d tokens, the server counted %d", rs.ReasoningTotal, rs.AnswerTotal, r.Tokens.OutputTotal)
		}
	})
}
