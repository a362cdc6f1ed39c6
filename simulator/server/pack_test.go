package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// A model with stream_interval 4 sends its first token alone, then one
// event for each four tokens, the group's text in one delta, and the
// rest with the finish, as vLLM's --stream-interval does; reasoning
// and answer tokens of one group go in two events, each its own field.
// The usage still counts every token.
func TestStreamIntervalPacksTokens(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		models := `models:
  - name: m
    preset: h100-80gb/llama-3.1-8b
    stream_interval: 4
    reasoning: {tokens: 6}
`
		ts := startSim(t, models, "", "")
		code, body := post(t, ts.URL+"/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"hello there"}],"max_tokens":17,"stream":true,"stream_options":{"include_usage":true}}`)
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		type delta struct {
			Content   *string `json:"content"`
			Reasoning *string `json:"reasoning_content"`
		}
		var events []delta
		usage := 0
		for _, line := range strings.Split(string(body), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var c struct {
				Choices []struct {
					Delta delta `json:"delta"`
				} `json:"choices"`
				Usage *struct {
					Completion int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("%v: %s", err, data)
			}
			if c.Usage != nil {
				usage = c.Usage.Completion
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content != nil && *ch.Delta.Content != "" || ch.Delta.Reasoning != nil {
					events = append(events, ch.Delta)
				}
			}
		}
		// The canned answer ends at 15 tokens: 0 | 1-4 | 5 (thought)
		// and 6-8 (answer) | 9-12 | 13-14, with the finish. Thought ends
		// at token 6, so the third group is two events.
		if len(events) != 6 || usage != 15 {
			t.Fatalf("%d content events and %d completion tokens, want 6 and 15: %s", len(events), usage, body)
		}
		if c := events[4].Content; c == nil || len(strings.Fields(*c)) != 4 {
			t.Errorf("the fifth event %+v does not hold four tokens' words", events[4])
		}
		if events[0].Reasoning == nil || events[2].Reasoning == nil || events[3].Content == nil {
			t.Errorf("events %+v: want thought, thought, thought, answer, answer, answer", events)
		}
	})
}
