package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const reasoningModels = `
models:
  - name: thinker
    context_length: 4096
    engine: instant
    reasoning: {tokens: 4, efforts: {low: 2, high: 6}}
`

// respEvents splits a Responses stream into its events, checking each
// "event:" name against its data's type and the sequence numbers
// against their order.
func respEvents(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, block := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
		name, data, ok := strings.Cut(block, "\ndata: ")
		if !ok || !strings.HasPrefix(name, "event: ") {
			t.Fatalf("not an event: %q", block)
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event data %q: %v", data, err)
		}
		if ev["type"] != strings.TrimPrefix(name, "event: ") || ev["sequence_number"] != float64(len(out)) {
			t.Fatalf("event %d: name %q, type %v, sequence %v", len(out), name, ev["type"], ev["sequence_number"])
		}
		out = append(out, ev)
	}
	return out
}

func countType(evs []map[string]any, typ string) int {
	n := 0
	for _, e := range evs {
		if e["type"] == typ {
			n++
		}
	}
	return n
}

// usageOf is the last event's response usage.
func usageOf(t *testing.T, evs []map[string]any) map[string]any {
	t.Helper()
	resp, _ := evs[len(evs)-1]["response"].(map[string]any)
	u, _ := resp["usage"].(map[string]any)
	if u == nil {
		t.Fatalf("no usage in the last event %v", evs[len(evs)-1])
	}
	return u
}

func detail(u map[string]any, obj, key string) float64 {
	d, _ := u[obj].(map[string]any)
	v, _ := d[key].(float64)
	return v
}

// TestResponsesStreamAsVLLM: /v1/responses streams vLLM's typed events in
// order, the thought as reasoning_text deltas (as many as the effort
// asks), the answer as output_text deltas, and ends with
// response.completed carrying usage, status "completed" even when the
// budget ran out (vLLM's catch-all; its usage says the cut), never [DONE].
func TestResponsesStreamAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, testResponsesStreamAsVLLM)
}

func testResponsesStreamAsVLLM(t *testing.T) {
	ts := startSim(t, reasoningModels, "", "")
	for _, c := range []struct {
		body              string
		thought, answered bool
		reasoning, status string
		wantThought       int
	}{
		{`{"model":"thinker","input":"Hi","max_output_tokens":30,"stream":true}`, true, true, "", "response.completed", 4},
		{`{"model":"thinker","input":[{"role":"user","content":"Hi"}],"max_output_tokens":30,"stream":true,"reasoning":{"effort":"high"}}`, true, true, "high", "response.completed", 6},
		{`{"model":"thinker","input":"Hi","max_output_tokens":30,"stream":true,"chat_template_kwargs":{"enable_thinking":false}}`, false, true, "", "response.completed", 0},
		{`{"model":"thinker","input":"Hi","max_output_tokens":3,"stream":true}`, true, false, "", "response.completed", 3},
	} {
		code, body := post(t, ts.URL+"/v1/responses", c.body)
		if code != 200 {
			t.Fatalf("%s: %d %s", c.body, code, body)
		}
		if strings.Contains(string(body), "[DONE]") {
			t.Errorf("%s: a Responses stream has no [DONE]", c.body)
		}
		evs := respEvents(t, body)
		if evs[0]["type"] != "response.created" || evs[1]["type"] != "response.in_progress" || evs[len(evs)-1]["type"] != c.status {
			t.Errorf("%s: first %v, %v, last %v; want created, in_progress, %s", c.body, evs[0]["type"], evs[1]["type"], evs[len(evs)-1]["type"], c.status)
		}
		if last, _ := evs[len(evs)-1]["response"].(map[string]any); last["status"] != "completed" || last["incomplete_details"] != nil {
			t.Errorf("%s: ends with status %v, incomplete_details %v; want completed, null", c.body, last["status"], last["incomplete_details"])
		}
		for _, e := range evs {
			if item, _ := e["item"].(map[string]any); e["type"] == "response.output_item.done" && item["status"] != "completed" {
				t.Errorf("%s: output_item.done without its finished item: %v", c.body, e)
			}
		}
		thought, answer := countType(evs, "response.reasoning_text.delta"), countType(evs, "response.output_text.delta")
		u := usageOf(t, evs)
		if thought != c.wantThought || (answer > 0) != c.answered || u["output_tokens"] != float64(thought+answer) ||
			detail(u, "output_tokens_details", "reasoning_tokens") != float64(thought) {
			t.Errorf("%s: %d thought, %d answer deltas, usage %v", c.body, thought, answer, u)
		}
	}
}

// TestResponsesContinue: previous_response_id continues a stored answer:
// the prompt counts the whole conversation, as vLLM's does; a response
// not stored (store false) or unknown is a 404 naming the field.
func TestResponsesContinue(t *testing.T) {
	t.Parallel()
	inBubble(t, testResponsesContinue)
}

func testResponsesContinue(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	turn := func(extra string) (int, map[string]any, string) {
		code, body := post(t, ts.URL+"/v1/responses", `{"model":"instant","input":"Tell me about the sea.","max_output_tokens":8,"stream":true`+extra+`}`)
		if code != 200 {
			return code, nil, string(body)
		}
		evs := respEvents(t, body)
		resp := evs[0]["response"].(map[string]any)
		return code, usageOf(t, evs), resp["id"].(string)
	}
	_, first, id := turn("")
	_, fresh, _ := turn(`,"store":false`)
	_, next, _ := turn(fmt.Sprintf(`,"previous_response_id":%q`, id))
	if next["input_tokens"].(float64) <= first["input_tokens"].(float64)+first["output_tokens"].(float64) || first["input_tokens"] != fresh["input_tokens"] {
		t.Errorf("continued prompt %v tokens; the first %v (+%v answer), a fresh one %v", next["input_tokens"], first["input_tokens"], first["output_tokens"], fresh["input_tokens"])
	}
	code, _, msg := turn(`,"previous_response_id":"resp_nobody"`)
	if code != 404 || !strings.Contains(msg, "previous_response_id") {
		t.Errorf("unknown previous response: %d %s", code, msg)
	}
	code, body := post(t, ts.URL+"/v1/responses", `{"model":"instant","input":"x","store":false}`)
	var unstored struct{ ID string }
	_ = json.Unmarshal(body, &unstored)
	if code != 200 || unstored.ID == "" {
		t.Fatalf("unstreamed: %d %s", code, body)
	}
	if code, _, _ := turn(fmt.Sprintf(`,"previous_response_id":%q`, unstored.ID)); code != 404 {
		t.Errorf("a response asked not to be stored was continued: %d", code)
	}
}

// TestResponsesBadInput: every malformed Responses request is a 400
// naming its field.
func TestResponsesBadInput(t *testing.T) {
	t.Parallel()
	inBubble(t, testResponsesBadInput)
}

func testResponsesBadInput(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	for body, param := range map[string]string{
		`{"model":"instant"}`:                                                                               "input",
		`{"model":"instant","input":[]}`:                                                                    "input",
		`{"model":"instant","input":""}`:                                                                    "input",
		`{"model":"instant","input":[{"type":"function_call_output"}]}`:                                     "input[0].output",
		`{"model":"instant","input":[{"type":"web_search_call"}]}`:                                          "input[0].type",
		`{"model":"instant","input":"x","tool_choice":"required"}`:                                          "tool_choice",
		`{"model":"instant","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":"required"}`: "tool_choice",
		`{"model":"instant","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`:   "tool_choice",
		`{"model":"instant","input":[{"role":"robot","content":"x"}]}`:                                                            "input[0].role",
		`{"model":"instant","input":"x","max_output_tokens":0}`:                                                                   "max_output_tokens",
		`{"model":"instant","input":"x","reasoning":{"effort":"extreme"}}`:                                                        "reasoning.effort",
		`{"model":"instant","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA"}]}]}`: "input[0].content[0].type",
		`{"model":"instant","input":[{"role":"user","content":[{"type":"input_image"}]}]}`:                                        "input[0].content[0].image_url",
		`{"input":"x"}`: "model",
	} {
		code, b := post(t, ts.URL+"/v1/responses", body)
		e := errorOf(t, b)
		if code != 400 || e.Error.Param == nil || *e.Error.Param != param {
			t.Errorf("%s: %d %s; want 400 naming %s", body, code, b, param)
		}
	}
}
