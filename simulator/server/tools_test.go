package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const toolModels = `
models:
  - name: caller
    context_length: 4096
    engine: instant
    tools: {share: 0.5, argument_tokens: 6}
  - name: thinking-caller
    context_length: 4096
    engine: instant
    reasoning: {tokens: 3}
    tools: {share: 1, argument_tokens: 6}
`

const weatherTool = `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]`

// chatEvents decodes a chat stream's data events (without [DONE]).
func chatEvents(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		out = append(out, ev)
	}
	return out
}

// TestToolCallsStreamAsVLLM: a model that calls tools streams the call
// as vLLM's tool parsers do: the first piece with the call's id, type
// and name, every later one its index and a piece of the arguments,
// which join to JSON; the answer ends with finish_reason tool_calls and
// counts the pieces as completion tokens. After a tool's result it
// answers in words; with tool_choice none it never calls.
func TestToolCallsStreamAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, testToolCallsStreamAsVLLM)
}

func testToolCallsStreamAsVLLM(t *testing.T) {
	ts := startSim(t, toolModels, "", "")
	body := func(msgs, extra string) string {
		return `{"model":"caller","messages":` + msgs + `,"stream":true,"stream_options":{"include_usage":true},"tools":` + weatherTool + extra + `}`
	}
	user := `[{"role":"user","content":"Weather in Paris?"}]`
	code, b := post(t, ts.URL+"/v1/chat/completions", body(user, `,"tool_choice":"required"`))
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	var args strings.Builder
	pieces, finish, completion := 0, "", 0.0
	for i, ev := range chatEvents(t, b) {
		if u, ok := ev["usage"].(map[string]any); ok {
			completion = u["completion_tokens"].(float64)
			continue
		}
		ch := ev["choices"].([]any)[0].(map[string]any)
		if f, ok := ch["finish_reason"].(string); ok {
			finish = f
		}
		delta := ch["delta"].(map[string]any)
		calls, ok := delta["tool_calls"].([]any)
		if !ok {
			continue
		}
		call := calls[0].(map[string]any)
		fn := call["function"].(map[string]any)
		if first := pieces == 0; first != (call["id"] != nil) || first != (fn["name"] == "get_weather") {
			t.Errorf("event %d (piece %d): id %v, name %v; want both on the first piece only", i, pieces, call["id"], fn["name"])
		}
		args.WriteString(fn["arguments"].(string))
		pieces++
	}
	if pieces != 6 || finish != "tool_calls" || completion != 6 || !json.Valid([]byte(args.String())) {
		t.Errorf("%d pieces, finish %q, %v completion tokens, arguments %q; want 6, tool_calls, 6, JSON", pieces, finish, completion, args.String())
	}

	after := `[{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"18C"}]`
	for _, c := range []struct{ msgs, extra string }{{after, `,"tool_choice":"required"`}, {user, `,"tool_choice":"none"`}} {
		_, b = post(t, ts.URL+"/v1/chat/completions", body(c.msgs, c.extra))
		if strings.Contains(string(b), "tool_calls") {
			t.Errorf("%s %s: called a tool:\n%s", c.msgs, c.extra, b)
		}
	}

	// auto: about half of the prompts, each always alike.
	calls := 0
	for i := range 200 {
		msgs := fmt.Sprintf(`[{"role":"user","content":"question %d"}]`, i)
		_, b1 := post(t, ts.URL+"/v1/chat/completions", body(msgs, ""))
		_, b2 := post(t, ts.URL+"/v1/chat/completions", body(msgs, `,"tool_choice":"auto"`))
		c1, c2 := strings.Contains(string(b1), `"tool_calls":[{`), strings.Contains(string(b2), `"tool_calls":[{`)
		if c1 != c2 {
			t.Fatalf("prompt %d called a tool once of twice", i)
		}
		if c1 {
			calls++
		}
	}
	if calls < 70 || calls > 130 {
		t.Errorf("share 0.5: %d of 200 prompts called a tool", calls)
	}
}

// TestToolCallsInResponses: the Responses API streams a call as a
// function_call item's argument deltas after the thought, and takes the
// call and its output back as input items.
func TestToolCallsInResponses(t *testing.T) {
	t.Parallel()
	inBubble(t, testToolCallsInResponses)
}

func testToolCallsInResponses(t *testing.T) {
	ts := startSim(t, toolModels, "", "")
	tools := `[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]`
	code, b := post(t, ts.URL+"/v1/responses", `{"model":"thinking-caller","input":"Weather?","stream":true,"tools":`+tools+`}`)
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	evs := respEvents(t, b)
	last := evs[len(evs)-1]
	out := last["response"].(map[string]any)["output"].([]any)
	call := out[len(out)-1].(map[string]any)
	if n := countType(evs, "response.function_call_arguments.delta"); n != 6 || countType(evs, "response.reasoning_text.delta") != 3 ||
		last["type"] != "response.completed" || call["type"] != "function_call" || call["name"] != "get_weather" || !json.Valid([]byte(call["arguments"].(string))) {
		t.Errorf("%d argument deltas, last %v, call %v", n, last["type"], call)
	}
	input := `[{"role":"user","content":"Weather?"},{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"18C"}]`
	code, b = post(t, ts.URL+"/v1/responses", `{"model":"thinking-caller","input":`+input+`,"stream":true,"tools":`+tools+`}`)
	if evs := respEvents(t, b); code != 200 || countType(evs, "response.output_text.delta") == 0 || countType(evs, "response.function_call_arguments.delta") != 0 {
		t.Errorf("after the tool's output: %d, %s", code, b)
	}
}

// scriptedResponses script a thought and a call: the weather entry
// thinks, then calls get_weather with the city it matched, and says the
// weather once the tool's result is in.
const scriptedResponses = `
version: 1
responses:
  - id: weather
    match: {regex: "weather in (?P<city>[A-Za-z]+)"}
    think: "The user wants the weather in {city}; I should call the tool."
    tool_call: {name: get_weather, arguments: '{{"city": "{city}"}}'}
    content: "It is 18 degrees in {city}."
default:
  content: "Fine."
`

// TestScriptedThinkingAndCalls: the responses file scripts a thought
// (streamed as reasoning by a model that does not otherwise reason) and
// a call (made when the request offers the function; the words after
// its result, or when it is not offered).
func TestScriptedThinkingAndCalls(t *testing.T) {
	t.Parallel()
	inBubble(t, testScriptedThinkingAndCalls)
}

func testScriptedThinkingAndCalls(t *testing.T) {
	ts := startSim(t, testModels, scriptedResponses, "")
	ask := func(msgs, tools string) (reasoning, content, args string, finish string) {
		body := `{"model":"instant","messages":` + msgs + `,"stream":true` + tools + `}`
		code, b := post(t, ts.URL+"/v1/chat/completions", body)
		if code != 200 {
			t.Fatalf("%s: %d %s", body, code, b)
		}
		for _, ev := range chatEvents(t, b) {
			ch := ev["choices"].([]any)[0].(map[string]any)
			if f, ok := ch["finish_reason"].(string); ok {
				finish = f
			}
			d := ch["delta"].(map[string]any)
			if s, ok := d["reasoning_content"].(string); ok {
				reasoning += s
			}
			if s, ok := d["content"].(string); ok {
				content += s
			}
			if calls, ok := d["tool_calls"].([]any); ok {
				args += calls[0].(map[string]any)["function"].(map[string]any)["arguments"].(string)
			}
		}
		return
	}
	user := `[{"role":"user","content":"What is the weather in Paris?"}]`
	r, c, a, f := ask(user, `,"tools":`+weatherTool)
	if r != "The user wants the weather in Paris; I should call the tool." || c != "" || a != `{"city": "Paris"}` || f != "tool_calls" {
		t.Errorf("offered: reasoning %q, content %q, arguments %q, finish %q", r, c, a, f)
	}
	if _, c, a, _ = ask(user, ""); c != "It is 18 degrees in Paris." || a != "" {
		t.Errorf("not offered: content %q, arguments %q", c, a)
	}
	after := `[{"role":"user","content":"What is the weather in Paris?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"18"}]`
	if _, c, a, _ = ask(after, `,"tools":`+weatherTool); c != "It is 18 degrees in Paris." || a != "" {
		t.Errorf("after the result: content %q, arguments %q", c, a)
	}
}

// TestToolCallUnstreamedAsVLLM: a call answered in one body (stream
// false) is vLLM's message: content null, the call in tool_calls with its
// id, type, name and JSON arguments, finish_reason tool_calls; a thought
// before it stands in the model's reasoning field, not in the content.
func TestToolCallUnstreamedAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, func(t *testing.T) {
		ts := startSim(t, toolModels, "", "")
		for _, model := range []string{"caller", "thinking-caller"} {
			code, b := post(t, ts.URL+"/v1/chat/completions", `{"model":"`+model+`","messages":[{"role":"user","content":"Weather in Paris?"}],"tools":`+
				weatherTool+`,"tool_choice":"required"}`)
			if code != 200 {
				t.Fatalf("%s: %d %s", model, code, b)
			}
			var body struct {
				Choices []struct {
					Message struct {
						Content   *string `json:"content"`
						Reasoning *string `json:"reasoning_content"`
						ToolCalls []struct {
							ID       string `json:"id"`
							Type     string `json:"type"`
							Function struct{ Name, Arguments string }
						} `json:"tool_calls"`
					} `json:"message"`
					FinishReason string `json:"finish_reason"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatalf("%s: %v: %s", model, err, b)
			}
			m := body.Choices[0].Message
			if m.Content != nil || len(m.ToolCalls) != 1 || body.Choices[0].FinishReason != "tool_calls" {
				t.Fatalf("%s: %s", model, b)
			}
			call := m.ToolCalls[0]
			if call.ID == "" || call.Type != "function" || call.Function.Name != "get_weather" || !json.Valid([]byte(call.Function.Arguments)) {
				t.Errorf("%s: call %+v", model, call)
			}
			if (model == "thinking-caller") != (m.Reasoning != nil && *m.Reasoning != "") {
				t.Errorf("%s: reasoning %v", model, m.Reasoning)
			}
		}
	})
}

// TestToolArgumentsFollowTheSchema: a call's arguments fill the offered
// tool's own argument (its first required string property), as llm-d's
// and a real model's follow the schema; a schema that names none gets
// query.
func TestToolArgumentsFollowTheSchema(t *testing.T) {
	t.Parallel()
	inBubble(t, func(t *testing.T) {
		ts := startSim(t, toolModels, "", "")
		for _, tc := range []struct{ tool, key string }{
			{`[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"units":{"type":"string"},"city":{"type":"string"}},"required":["city"]}}}]`, "city"},
			{`[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}}}}}]`, "note"},
			{weatherTool, "query"},
		} {
			code, b := post(t, ts.URL+"/v1/chat/completions", `{"model":"caller","messages":[{"role":"user","content":"Go"}],"tools":`+tc.tool+`,"tool_choice":"required"}`)
			if code != 200 {
				t.Fatalf("%d %s", code, b)
			}
			var body struct {
				Choices []struct {
					Message struct {
						ToolCalls []struct{ Function struct{ Arguments string } } `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(b, &body); err != nil || len(body.Choices[0].Message.ToolCalls) != 1 {
				t.Fatalf("%v: %s", err, b)
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(body.Choices[0].Message.ToolCalls[0].Function.Arguments), &args); err != nil || args[tc.key] == nil || len(args) != 1 {
				t.Errorf("arguments %s, want one %q", body.Choices[0].Message.ToolCalls[0].Function.Arguments, tc.key)
			}
		}
	})
}
