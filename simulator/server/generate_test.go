package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestGenerateEndpoint: SGLang's native /generate, streamed and not: the
// text is cumulative from event to event, the counts and cached tokens
// are under meta_info, the last event has the finish reason as SGLang's
// object, and the stream ends with [DONE]; bad bodies are 400s naming the
// field.
func TestGenerateEndpoint(t *testing.T) {
	t.Parallel()
	inBubble(t, testGenerateEndpoint)
}

func testGenerateEndpoint(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	status, b := post(t, ts.URL+"/generate", `{"text":"hello there","sampling_params":{"max_new_tokens":4,"ignore_eos":true},"stream":true}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	var texts []string
	var last map[string]any
	events := strings.Split(strings.TrimSpace(string(b)), "\n\n")
	if events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("no [DONE] at the end: %q", events[len(events)-1])
	}
	for _, e := range events[:len(events)-1] {
		var ev map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(e, "data: ")), &ev); err != nil {
			t.Fatalf("%q: %v", e, err)
		}
		texts = append(texts, ev["text"].(string))
		last = ev
	}
	for i := 1; i < len(texts); i++ {
		if !strings.HasPrefix(texts[i], texts[i-1]) {
			t.Errorf("event %d's text %q does not go on from %q", i, texts[i], texts[i-1])
		}
	}
	mi := last["meta_info"].(map[string]any)
	if fr, _ := mi["finish_reason"].(map[string]any); fr["type"] != "length" || mi["completion_tokens"] != 4.0 || mi["prompt_tokens"] == nil || mi["cached_tokens"] == nil {
		t.Errorf("last meta_info %v", mi)
	}
	status, b = post(t, ts.URL+"/generate", `{"text":"hello there","sampling_params":{"max_new_tokens":2}}`)
	var un map[string]any
	if status != 200 || json.Unmarshal(b, &un) != nil || un["text"] == "" || un["meta_info"] == nil {
		t.Errorf("unstreamed: %d %s", status, b)
	}
	for body, field := range map[string]string{`{"sampling_params":{}}`: "text", `{"input_ids":[1,2]}`: "input_ids",
		`{"text":"x","sampling_params":{"max_new_tokens":-1}}`: "max_new_tokens", `{"text":"x","model":"nope"}`: "model"} {
		status, b := post(t, ts.URL+"/generate", body)
		if status/100 != 4 || !bytes.Contains(b, []byte(field)) {
			t.Errorf("%s: %d %s", body, status, b)
		}
	}
}
