package server

import (
	"encoding/json"
	"strconv"
	"testing"
)

// TestUnaryChatReasoningAsVLLM: a non-streamed chat answer of a reasoning
// model counts its thought in usage as the stream does (when the model
// reports it), and a thought cut by max_tokens leaves content null, as
// vLLM's reasoning parsers find no content without the thought's end.
func TestUnaryChatReasoningAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, func(t *testing.T) {
		ts := startSim(t, `
models:
  - name: thinker
    context_length: 4096
    engine: instant
    reasoning: {tokens: 4, report_tokens: true}
`, "", "")
		for _, c := range []struct {
			maxTokens, thought int
			content            bool
		}{{3, 3, false}, {30, 4, true}} {
			body := `{"model":"thinker","messages":[{"role":"user","content":"Hi"}],"max_tokens":` + strconv.Itoa(c.maxTokens) + `}`
			code, out := post(t, ts.URL+"/v1/chat/completions", body)
			var r struct {
				Choices []struct {
					Message map[string]any `json:"message"`
				} `json:"choices"`
				Usage map[string]any `json:"usage"`
			}
			if err := json.Unmarshal(out, &r); err != nil || code != 200 || len(r.Choices) != 1 {
				t.Fatalf("max_tokens %d: %d %s", c.maxTokens, code, out)
			}
			content, has := r.Choices[0].Message["content"]
			if !has || (content != nil) != c.content {
				t.Errorf("max_tokens %d: content %#v, want text %v (null otherwise)", c.maxTokens, content, c.content)
			}
			if got := detail(r.Usage, "completion_tokens_details", "reasoning_tokens"); got != float64(c.thought) {
				t.Errorf("max_tokens %d: usage %v, want %d reasoning tokens", c.maxTokens, r.Usage, c.thought)
			}
		}
	})
}
