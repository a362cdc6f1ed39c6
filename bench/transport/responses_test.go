package transport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/workload/kind"

	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// vllmEvent is one Responses API event as vLLM's router writes it
// (api_router.py _convert_stream_to_sse_events: "event: TYPE", then the
// event's model_dump_json, whose fields keep the order of OpenAI's types:
// "type" last), fields being the JSON members before sequence_number.
func vllmEvent(typ string, seq int, fields string) string {
	if fields != "" {
		fields += ","
	}
	return fmt.Sprintf("event: %s\ndata: {%s\"sequence_number\":%d,\"type\":%q}\n\n", typ, fields, seq, typ)
}

// vllmResponse is the response object of created, in_progress,
// completed, incomplete and failed events.
func vllmResponse(status, usage, extra string) string {
	if usage == "" {
		usage = "null"
	}
	return `"response":{"id":"resp_7f3a","created_at":1764000000,"incomplete_details":null,"instructions":null,"metadata":null,` +
		`"model":"m","object":"response","output":[],"parallel_tool_calls":true,"temperature":1.0,"tool_choice":"auto","tools":[],` +
		`"top_p":1.0,"background":false,"max_output_tokens":10,"previous_response_id":null,"status":"` + status + `",` +
		`"usage":` + usage + extra + `}`
}

func responsesUsageJSON(in, cached, out, reasoning int) string {
	return fmt.Sprintf(`{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":%d},"total_tokens":%d}`,
		in, cached, out, reasoning, in+out)
}

// responsesStream is a reasoning model's answer: created, in_progress,
// the reasoning item's deltas, the message's deltas, then end (the
// terminal event, or nothing).
func responsesStream(thought, answer []string, end string) []string {
	seq := 0
	ev := func(typ, fields string) string { seq++; return vllmEvent(typ, seq-1, fields) }
	out := []string{ev("response.created", vllmResponse("in_progress", "", "")), ev("response.in_progress", vllmResponse("in_progress", "", ""))}
	if len(thought) > 0 {
		out = append(out, ev("response.output_item.added", `"item":{"id":"rs_1","summary":[],"type":"reasoning","content":null,"status":"in_progress"},"output_index":0`))
		for _, t := range thought {
			out = append(out, ev("response.reasoning_text.delta", fmt.Sprintf(`"content_index":0,"delta":%q,"item_id":"rs_1","output_index":0`, t)))
		}
		out = append(out, ev("response.reasoning_text.done", fmt.Sprintf(`"content_index":0,"item_id":"rs_1","output_index":0,"text":%q`, strings.Join(thought, ""))))
	}
	if len(answer) > 0 {
		out = append(out, ev("response.output_item.added", `"item":{"id":"msg_1","content":[],"role":"assistant","status":"in_progress","type":"message"},"output_index":1`),
			ev("response.content_part.added", `"content_index":0,"item_id":"msg_1","output_index":1,"part":{"annotations":[],"text":"","type":"output_text","logprobs":null}`))
		for _, a := range answer {
			out = append(out, ev("response.output_text.delta", fmt.Sprintf(`"content_index":0,"delta":%q,"item_id":"msg_1","logprobs":[],"output_index":1`, a)))
		}
		out = append(out, ev("response.output_text.done", fmt.Sprintf(`"content_index":0,"item_id":"msg_1","logprobs":[],"output_index":1,"text":%q`, strings.Join(answer, ""))))
	}
	if end != "" {
		out = append(out, ev(end[:strings.IndexByte(end, '|')], end[strings.IndexByte(end, '|')+1:]))
	}
	return out
}

func doResponses(t *testing.T, url string, req *workload.Request) *record.Record {
	t.Helper()
	c, err := NewClient(Target{BaseURL: url, Model: "m", Endpoint: kind.Name("responses"), Timeout: 5 * time.Second}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	rec := &record.Record{}
	c.Do(req, rec, true)
	return rec
}

// TestResponsesStreamRead: vLLM's Responses event streams read to the
// same figures a chat stream gives: TTFT at the first delta of any kind,
// TTFAT at the first output_text delta, usage with its cached and
// reasoning tokens, the end at response.completed (no [DONE] comes), and
// failures as errors.
func TestResponsesStreamRead(t *testing.T) {
	quiet.Wire(t, func() { testResponsesStreamRead(t) })
}

func testResponsesStreamRead(t *testing.T) {
	completed := "response.completed|" + vllmResponse("completed", responsesUsageJSON(12, 8, 5, 3), "")
	cases := []struct {
		name                         string
		events                       []string
		class                        string
		chunks, firstAnswerAt        int
		prompt, cached, out, thought int
		noAnswer, length             bool
		text                         string
	}{
		{"reasoning then answer, completed", responsesStream([]string{"Let", " me", " think"}, []string{"Four", "."}, completed),
			"", 5, 3, 12, 8, 5, 3, false, false, "Four."},
		{"the budget spent on thought: incomplete", responsesStream([]string{"a", "b", "c"}, nil,
			"response.incomplete|"+vllmResponse("incomplete", responsesUsageJSON(12, 0, 3, 3), `,"incomplete_details":{"reason":"max_output_tokens"}`)),
			"", 3, -1, 12, 0, 3, 3, true, true, ""},
		{"the budget spent on thought: completed, as llama.cpp and llm-d end it", responsesStream([]string{"a", "b", "c"}, nil,
			"response.completed|"+vllmResponse("completed", responsesUsageJSON(12, 0, 10, 10), "")),
			"", 3, -1, 12, 0, 10, 10, true, true, ""},
		{"no reasoning", responsesStream(nil, []string{"Just", " text"}, "response.completed|"+vllmResponse("completed", responsesUsageJSON(9, 0, 2, 0), "")),
			"", 2, 0, 9, 0, 2, 0, false, false, "Just text"},
		{"response.failed mid-stream", responsesStream(nil, []string{"a"}, "response.failed|"+vllmResponse("failed", "", `,"error":{"code":"server_error","message":"engine died"}`)),
			record.ClassStreamError, 1, 0, 0, 0, 1, 0, false, false, "a"},
		{"an error event", responsesStream(nil, []string{"a"}, `error|"code":"invalid_prompt","message":"bad","param":null`),
			record.ClassStreamError, 1, 0, 0, 0, 1, 0, false, false, "a"},
		{"the stream ends before completed", responsesStream(nil, []string{"a", "b"}, ""),
			record.ClassTruncated, 2, 0, 0, 0, 2, 0, false, false, "ab"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := doResponses(t, oddServer(t, sse(c.events...)), &workload.Request{Messages: []workload.Message{{Role: "user", Content: "x"}}, MaxTokens: 10})
			if rec.Class != c.class {
				t.Fatalf("class %q (%s), want %q", rec.Class, rec.Message, c.class)
			}
			at := -1
			for i, ct := range rec.ChunkTimes {
				if ct == rec.FirstAnswer && rec.FirstAnswer > 0 {
					at = i
					break
				}
			}
			if rec.Chunks != c.chunks || at != c.firstAnswerAt || string(rec.Text) != c.text {
				t.Errorf("%d chunks, first answer at %d, text %q; want %d, %d, %q", rec.Chunks, at, rec.Text, c.chunks, c.firstAnswerAt, c.text)
			}
			if c.class != "" {
				return
			}
			if rec.PromptTokens != c.prompt || rec.CachedTokens != c.cached || !rec.CachedReported || rec.OutputTokens() != c.out ||
				rec.ThoughtTokens() != c.thought || rec.NoAnswer() != c.noAnswer || rec.FinishLength != c.length || rec.NoDone {
				t.Errorf("prompt %d cached %d (%v) out %d thought %d no answer %v length %v no-done %v; want %d %d %d %d %v %v",
					rec.PromptTokens, rec.CachedTokens, rec.CachedReported, rec.OutputTokens(), rec.ThoughtTokens(), rec.NoAnswer(), rec.FinishLength, rec.NoDone,
					c.prompt, c.cached, c.out, c.thought, c.noAnswer, c.length)
			}
			if rec.ResponseID != "resp_7f3a" {
				t.Errorf("response id %q, want resp_7f3a (from response.created)", rec.ResponseID)
			}
		})
	}
}

// TestResponsesNotStreamed: a server that ignores stream and answers
// with one whole response object is told apart from a malformed answer.
func TestResponsesNotStreamed(t *testing.T) {
	quiet.Wire(t, func() { testResponsesNotStreamed(t) })
}

func testResponsesNotStreamed(t *testing.T) {
	rec := doResponses(t, oddServer(t, plainJSON(`{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":3,"output_tokens":1}}`)),
		&workload.Request{Messages: []workload.Message{{Role: "user", Content: "x"}}})
	if rec.Class != record.ClassNotStreamed {
		t.Errorf("class %q (%s), want %q", rec.Class, rec.Message, record.ClassNotStreamed)
	}
}

// TestResponsesBody: the request a turn sends: input items, the budget
// as max_output_tokens, store off unless a later turn will name the
// response, and previous_response_id when the server holds the history.
func TestResponsesBody(t *testing.T) {
	quiet.Wire(t, func() { testResponsesBody(t) })
}

func testResponsesBody(t *testing.T) {
	bodies := make(chan map[string]any, 2)
	url := fakeserver.StartRaw(t, &fakeserver.Raw{Serve: func(w *bufio.Writer, r *http.Request, _ int) bool {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("body %q: %v", b, err)
		}
		m["_path"] = r.URL.Path
		bodies <- m
		w.WriteString(sse(responsesStream(nil, []string{"ok"}, "response.completed|"+vllmResponse("completed", responsesUsageJSON(3, 0, 1, 0), ""))...))
		return false
	}})
	first := &workload.Request{Messages: []workload.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}}, MaxTokens: 7, KeepResponse: true}
	next := &workload.Request{Messages: []workload.Message{{Role: "user", Content: "And?"}}, MaxTokens: 7, PreviousResponse: "resp_7f3a"}
	for i, req := range []*workload.Request{first, next} {
		rec := doResponses(t, url, req)
		if rec.Class != "" {
			t.Fatalf("turn %d: %s %s", i+1, rec.Class, rec.Message)
		}
		got := <-bodies
		raw, _ := json.Marshal(got["input"])
		var input []workload.Message
		_ = json.Unmarshal(raw, &input)
		if got["_path"] != "/v1/responses" || fmt.Sprint(input) != fmt.Sprint(req.Messages) || got["max_output_tokens"] != 7.0 ||
			got["stream"] != true || got["store"] != req.KeepResponse || got["max_tokens"] != nil {
			t.Errorf("turn %d sent %v", i+1, got)
		}
		if prev, has := got["previous_response_id"]; (req.PreviousResponse != "") != has || has && prev != req.PreviousResponse {
			t.Errorf("turn %d: previous_response_id %v, want %q", i+1, prev, req.PreviousResponse)
		}
	}
}

// TestToolCallsCounted: tool calls stream as vLLM's tool parsers send
// them, in chat (delta.tool_calls: the name first, then the arguments
// in pieces, finish_reason "tool_calls") and in the Responses API
// (function_call_arguments deltas): each piece is output, for TTFT and
// ITL, and the answer, for TTFAT.
func TestToolCallsCounted(t *testing.T) {
	quiet.Wire(t, func() { testToolCallsCounted(t) })
}

func testToolCallsCounted(t *testing.T) {
	role := vllmChunk(`{"role":"assistant","content":""}`, "")
	name := vllmChunk(`{"tool_calls":[{"id":"chatcmpl-tool-1","type":"function","index":0,"function":{"name":"get_weather"}}]}`, "")
	args := func(s string) string {
		return vllmChunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}`, s), "")
	}
	chat := stream([]string{role}, deltas("reasoning_content", "I", " should", " call"), []string{name, args(`{"city": `), args(`"Paris"}`),
		vllmChunk(`{"tool_calls":[]}`, ""), vllmChunk(`{}`, "tool_calls"), vllmUsage(20, 6, -1), "data: [DONE]\n\n"})
	rec := doOne(t, oddServer(t, sse(chat...)))
	if rec.Class != "" || rec.Chunks != 6 || rec.ToolChunks != 3 || !rec.ToolFinish || !rec.CalledTool() || rec.FirstAnswer != rec.ChunkTimes[3] || rec.ThoughtTokens() != 3 {
		t.Errorf("chat: class %q, %d chunks, %d tool chunks, finish %v, thought %d; want 6, 3, true, 3 (first answer the name)", rec.Class, rec.Chunks, rec.ToolChunks, rec.ToolFinish, rec.ThoughtTokens())
	}
	want := record.ToolCall{ID: "chatcmpl-tool-1", Name: "get_weather", Arguments: `{"city": "Paris"}`}
	if len(rec.ToolCalls) != 1 || rec.ToolCalls[0] != want {
		t.Errorf("chat: kept calls %+v, want %+v", rec.ToolCalls, want)
	}

	seq := 0
	ev := func(typ, fields string) string { seq++; return vllmEvent(typ, seq-1, fields) }
	resp := []string{ev("response.created", vllmResponse("in_progress", "", "")),
		ev("response.output_item.added", `"item":{"arguments":"","call_id":"call_1","name":"get_weather","type":"function_call","id":"fc_1","status":"in_progress"},"output_index":0`),
		ev("response.function_call_arguments.delta", `"delta":"{\"city\": ","item_id":"fc_1","output_index":0`),
		ev("response.function_call_arguments.delta", `"delta":"\"Paris\"}","item_id":"fc_1","output_index":0`),
		ev("response.function_call_arguments.done", `"arguments":"{\"city\": \"Paris\"}","item_id":"fc_1","output_index":0`),
		ev("response.completed", vllmResponse("completed", responsesUsageJSON(20, 0, 2, 0), ""))}
	rec = doResponses(t, oddServer(t, sse(resp...)), &workload.Request{Messages: []workload.Message{{Role: "user", Content: "x"}}})
	if rec.Class != "" || rec.Chunks != 2 || rec.ToolChunks != 2 || rec.FirstAnswer != rec.ChunkTimes[0] {
		t.Errorf("responses: class %q, %d chunks, %d tool chunks; want 2, 2", rec.Class, rec.Chunks, rec.ToolChunks)
	}
	want.ID = "call_1"
	if len(rec.ToolCalls) != 1 || rec.ToolCalls[0] != want {
		t.Errorf("responses: kept calls %+v, want %+v", rec.ToolCalls, want)
	}
}

// FuzzScanResponses: any event payload reads without a panic, and what a
// typed event says follows its type alone.
func FuzzScanResponses(f *testing.F) {
	for _, s := range []string{
		`{"content_index":0,"delta":"Hi","item_id":"msg_1","logprobs":[],"output_index":1,"sequence_number":7,"type":"response.output_text.delta"}`,
		`{"type":"response.reasoning_text.delta","delta":"x"}`,
		`{"response":{"id":"resp_1","usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":1},"output_tokens":2}},"type":"response.completed"}`,
		`{"response":{"id":"r","usage":{"input_tokens":-1,"output_tokens":"x"}},"type":"response.incomplete","reason":"max_output_tokens"}`,
		`{"type":"error","message":"x"}`, `{"error":{"message":"x"}}`, `{"type":"response.`, `{"response":{"id":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var c chunk
		responsesProtocol{}.scan(p, &c, &progress{})
		_ = responsesProtocol{}.text(nil, p)
		if c.content && !c.answer && !c.reasoning && !c.tool {
			t.Fatalf("content of no kind from %q", p)
		}
		if c.terminal && c.hasError {
			t.Fatalf("both the end and an error from %q", p)
		}
	})
}

// TestToolBodies: the target's tools go with every request as each API
// takes them (nested under "function" in chat, flat in the Responses
// API), tool_choice a string or the named function, a request's own
// tools instead of the target's; an answered call goes back as the
// assistant's tool_calls and a tool message (chat) or as function_call
// and function_call_output items (Responses).
func TestToolBodies(t *testing.T) {
	history := []workload.Message{{Role: "user", Content: "Weather in Paris?"},
		{Role: "assistant", ToolCalls: []workload.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: `{"temp":18}`}}
	own := []workload.Tool{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}}
	for _, c := range []struct {
		ep     Endpoint
		choice string
		tools  []workload.Tool
		want   []string
	}{
		{kind.Name("chat"), "required", nil, []string{`"tools":[{"type":"function","function":{"name":"get_weather","description":"Get the current weather in a city.","parameters":{"type":"object"`,
			`"tool_choice":"required"`, `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`,
			`{"role":"tool","content":"{\"temp\":18}","tool_call_id":"c1"}`}},
		{kind.Name("chat"), "calculate", own, []string{`"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}]`,
			`"tool_choice":{"type":"function","function":{"name":"calculate"}}`}},
		{kind.Name("responses"), "get_weather", nil, []string{`"tools":[{"type":"function","name":"get_weather","description":`, `"tool_choice":{"type":"function","name":"get_weather"}`,
			`{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}`,
			`{"type":"function_call_output","call_id":"c1","output":"{\"temp\":18}"}`}},
	} {
		c2, err := NewClient(Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Endpoint: c.ep, Tools: workload.BuiltinTools(), ToolChoice: c.choice}, 1)
		if err != nil {
			t.Fatal(err)
		}
		body := string(c2.appendBody(nil, &workload.Request{Messages: history, Tools: c.tools}))
		if !json.Valid([]byte(body)) {
			t.Fatalf("%s: invalid JSON %s", c.ep, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s %s: body lacks %s\n%s", c.ep, c.choice, w, body)
			}
		}
	}
}

// TestLlamaCppResponsesStream: a Responses stream captured from a real
// llama-server (v0.5.0 built from node-llama-cpp 3.22.1's bundle, the
// recipe's tiny model): type first in each event, no reasoning tokens in
// usage, its per-response timings beside the response.
func TestLlamaCppResponsesStream(t *testing.T) {
	quiet.Wire(t, func() { testLlamaCppResponsesStream(t) })
}

func testLlamaCppResponsesStream(t *testing.T) {
	raw, err := os.ReadFile("testdata/llama-cpp-responses.sse")
	if err != nil {
		t.Fatal(err)
	}
	rec := doResponses(t, oddServer(t, sse(string(raw))), &workload.Request{Messages: []workload.Message{{Role: "user", Content: "hello there"}}, MaxTokens: 4})
	if rec.Class != "" || rec.Chunks != 4 || rec.CompletionTokens != 4 || rec.PromptTokens == 0 || !rec.CachedReported ||
		rec.Timings == nil || rec.Timings.PredictedN != 4 || rec.NoDone || !strings.HasPrefix(rec.ResponseID, "resp_") {
		t.Errorf("class %q (%s), %d chunks, usage %d/%d cached %v, timings %+v, id %q", rec.Class, rec.Message, rec.Chunks,
			rec.PromptTokens, rec.CompletionTokens, rec.CachedReported, rec.Timings, rec.ResponseID)
	}
}

// TestResponsesStreamWithPythonSpacing: a Responses stream written as a
// Python server writes JSON (a space after every colon and comma) reads
// as the compact one: its type is read as JSON, not as bytes.
func TestResponsesStreamWithPythonSpacing(t *testing.T) {
	compact := []string{
		`{"response":{"id":"resp_1","status":"in_progress"},"sequence_number":0,"type":"response.created"}`,
		`{"content_index":0,"delta":"Hel","item_id":"m","output_index":0,"sequence_number":1,"type":"response.output_text.delta"}`,
		`{"content_index":0,"delta":"lo","item_id":"m","output_index":0,"sequence_number":2,"type":"response.output_text.delta"}`,
		`{"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":7,"output_tokens":2,"input_tokens_details":{"cached_tokens":3}}},"sequence_number":3,"type":"response.completed"}`,
	}
	read := func(events []string) (chunks, prompt, out, cached int, done bool, text string) {
		var c chunk
		var pr progress
		var dst []byte
		for _, e := range events {
			responsesProtocol{}.scan([]byte(e), &c, &pr)
			if c.content {
				chunks++
				dst = responsesProtocol{}.text(dst, []byte(e))
			}
			if c.usage {
				prompt, out, cached = c.promptTokens, c.outTokens, c.cachedTokens
			}
			done = done || c.terminal
		}
		return chunks, prompt, out, cached, done, string(dst)
	}
	spaced := make([]string, len(compact))
	for i, e := range compact {
		spaced[i] = strings.NewReplacer(`":`, `": `, `,"`, `, "`).Replace(e)
	}
	c1, p1, o1, k1, d1, t1 := read(compact)
	c2, p2, o2, k2, d2, t2 := read(spaced)
	if c1 != 2 || p1 != 7 || o1 != 2 || k1 != 3 || !d1 || t1 != "Hello" {
		t.Fatalf("compact: %d chunks, usage %d/%d/%d, done %v, text %q", c1, p1, o1, k1, d1, t1)
	}
	if c2 != c1 || p2 != p1 || o2 != o1 || k2 != k1 || d2 != d1 || t2 != t1 {
		t.Errorf("spaced: %d chunks, usage %d/%d/%d, done %v, text %q; compact read %d, %d/%d/%d, %v, %q", c2, p2, o2, k2, d2, t2, c1, p1, o1, k1, d1, t1)
	}
}

// TestResponsesAnswerItemTyped: an answer sent back in a later turn's
// input is typed a message, as llama-server requires of an assistant
// item (it refuses one without: "Cannot determine type of 'item'"); the
// user's items stay as OpenAI's easy input messages.
func TestResponsesAnswerItemTyped(t *testing.T) {
	c, err := NewClient(Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Endpoint: kind.Name("responses")}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := string(c.appendBody(nil, &workload.Request{Messages: []workload.Message{
		{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: "more"}}}))
	for _, want := range []string{`{"role":"user","content":"hi"}`, `{"type":"message","role":"assistant","content":"hello"}`, `{"role":"user","content":"more"}`} {
		if !strings.Contains(b, want) {
			t.Errorf("the body lacks %s:\n%s", want, b)
		}
	}
}
