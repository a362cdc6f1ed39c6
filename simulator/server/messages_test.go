package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMessagesAsVLLM: knee sim answers Anthropic's Messages API as vLLM
// does: message_start at once with the input tokens, a thinking block
// over the thought, a text block over the answer (each started, its
// deltas, stopped), message_delta with the stop_reason (max_tokens when
// the budget ran out) and both counts, message_stop; event lines and
// compact JSON whose type comes first; max_tokens required; the whole
// message when not streamed.
func TestMessagesAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, testMessagesAsVLLM)
}

func testMessagesAsVLLM(t *testing.T) {
	ts := startSim(t, reasoningModels, "", "")
	for _, c := range []struct {
		body            string
		thought, blocks int
		stop            string
	}{
		{`{"model":"thinker","max_tokens":30,"system":"be brief","messages":[{"role":"user","content":"Hi"}],"stream":true}`, 4, 2, "end_turn"},
		{`{"model":"thinker","max_tokens":30,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}],"stream":true,"thinking":{"type":"disabled"}}`, 0, 1, "end_turn"},
		{`{"model":"thinker","max_tokens":3,"messages":[{"role":"user","content":"Hi"}],"stream":true}`, 3, 1, "max_tokens"},
	} {
		code, body := post(t, ts.URL+"/v1/messages", c.body)
		if code != 200 {
			t.Fatalf("%s: %d %s", c.body, code, body)
		}
		var types []string
		var usage map[string]any
		thought, text, prompt := 0, 0, 0.0
		for _, ev := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
			name, data, _ := strings.Cut(ev, "\ndata: ")
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("%s: an event that is not JSON: %q", c.body, ev)
			}
			if !strings.HasPrefix(data, `{"type":"`+m["type"].(string)+`"`) || name != "event: "+m["type"].(string) {
				t.Errorf("%s: event %q does not name its type first", c.body, ev)
			}
			types = append(types, m["type"].(string))
			switch m["type"] {
			case "message_start":
				prompt = m["message"].(map[string]any)["usage"].(map[string]any)["input_tokens"].(float64)
			case "content_block_delta":
				switch m["delta"].(map[string]any)["type"] {
				case "thinking_delta":
					thought++
				case "text_delta":
					text++
				}
			case "message_delta":
				usage = m["usage"].(map[string]any)
				if got := m["delta"].(map[string]any)["stop_reason"]; got != c.stop {
					t.Errorf("%s: stop_reason %v, want %s", c.body, got, c.stop)
				}
			}
		}
		if types[0] != "message_start" || types[len(types)-1] != "message_stop" || countOf(types, "content_block_start") != c.blocks ||
			countOf(types, "content_block_stop") != c.blocks || thought != c.thought {
			t.Errorf("%s: events %v; %d thought deltas", c.body, types, thought)
		}
		if usage["output_tokens"] != float64(thought+text) || usage["input_tokens"] != prompt || prompt == 0 {
			t.Errorf("%s: usage %v after %d thought and %d text deltas, %v input at the start", c.body, usage, thought, text, prompt)
		}
	}
	code, body := post(t, ts.URL+"/v1/messages", `{"model":"thinker","messages":[{"role":"user","content":"Hi"}]}`)
	if code != 400 || errorOf(t, body).Error.Param == nil || *errorOf(t, body).Error.Param != "max_tokens" {
		t.Errorf("no max_tokens: %d %s; want 400 naming max_tokens", code, body)
	}
	code, body = post(t, ts.URL+"/v1/messages", `{"model":"thinker","max_tokens":30,"messages":[{"role":"user","content":"Hi"}]}`)
	var msg struct {
		Type, Role string
		Content    []struct{ Type string }
		Usage      struct {
			OutputTokens int `json:"output_tokens"`
		}
	}
	if code != 200 || json.Unmarshal(body, &msg) != nil || msg.Type != "message" || msg.Role != "assistant" || len(msg.Content) != 2 ||
		msg.Content[0].Type != "thinking" || msg.Content[1].Type != "text" || msg.Usage.OutputTokens == 0 {
		t.Errorf("unstreamed: %d %s", code, body)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
