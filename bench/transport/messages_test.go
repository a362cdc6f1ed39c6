package transport

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// vllmMessagesStream is an answer as vLLM's Anthropic endpoint writes it
// (serving.py's converter: "event: TYPE", a compact model_dump_json with
// unset fields left out, the type first; message_start's message without
// its type and role; no ping; the usage again in message_delta).
func vllmMessagesStream(prompt int, thought, answer []string, stop string) string {
	ev := func(typ, rest string) string {
		return fmt.Sprintf("event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, rest)
	}
	out := ev("message_start", fmt.Sprintf(`,"message":{"id":"chatcmpl-1","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":0}}`, prompt))
	block := 0
	for _, part := range []struct {
		start, delta, field string
		tokens              []string
	}{{`{"type":"thinking","thinking":""}`, "thinking_delta", "thinking", thought}, {`{"type":"text","text":""}`, "text_delta", "text", answer}} {
		if len(part.tokens) == 0 {
			continue
		}
		out += ev("content_block_start", fmt.Sprintf(`,"content_block":%s,"index":%d`, part.start, block))
		for _, tok := range part.tokens {
			out += ev("content_block_delta", fmt.Sprintf(`,"delta":{"type":%q,%q:%q},"index":%d`, part.delta, part.field, tok, block))
		}
		out += ev("content_block_stop", fmt.Sprintf(`,"index":%d`, block))
		block++
	}
	out += ev("message_delta", fmt.Sprintf(`,"delta":{"stop_reason":%q},"usage":{"input_tokens":%d,"output_tokens":%d}`, stop, prompt, len(thought)+len(answer)))
	return out + ev("message_stop", "")
}

// anthropicMessagesStream is the same answer as Anthropic's API streams
// it: the message's type and role in message_start, its input tokens
// apart from the cache's, a ping, a thinking block signed, a space after
// each colon, and the output tokens alone in message_delta.
func anthropicMessagesStream() string {
	ev := func(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }
	return ev("message_start", `{"type": "message_start", "message": {"id": "msg_01", "type": "message", "role": "assistant", "content": [], "model": "claude", "stop_reason": null, "usage": {"input_tokens": 4, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 8, "output_tokens": 1}}}`) +
		ev("ping", `{"type": "ping"}`) +
		ev("content_block_start", `{"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}`) +
		ev("content_block_delta", `{"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hm"}}`) +
		ev("content_block_delta", `{"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQB"}}`) +
		ev("content_block_stop", `{"type": "content_block_stop", "index": 0}`) +
		ev("content_block_start", `{"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}`) +
		ev("content_block_delta", `{"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}}`) +
		ev("content_block_delta", `{"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": " there"}}`) +
		ev("content_block_stop", `{"type": "content_block_stop", "index": 1}`) +
		ev("message_delta", `{"type": "message_delta", "delta": {"stop_reason": "max_tokens", "stop_sequence": null}, "usage": {"output_tokens": 3}}`) +
		ev("message_stop", `{"type": "message_stop"}`)
}

// llamaEmptyMessagesStream is llama-server's answer when the model's
// first token ends it: message_start (the prompt as cache reads and
// input tokens apart), then at once message_delta and message_stop, no
// content block at all.
const llamaEmptyMessagesStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"chatcmpl-N","type":"message","role":"assistant","content":[],"model":"model/tiny.gguf",` +
	`"stop_reason":null,"stop_sequence":null,"usage":{"cache_read_input_tokens":1327,"input_tokens":1,"output_tokens":0}}}` + "\n\n" +
	"event: message_delta\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":0}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

// llamaStartlessMessagesStream is llama-server's answer of one token
// that streamed no text: no message_start (and so no prompt count), only
// the end.
const llamaStartlessMessagesStream = "event: message_delta\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":1}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

// TestMessagesStreamRead: Anthropic's Messages API reads the same figures
// from vLLM's compact stream and from Anthropic's spaced one: a chunk a
// thinking or text delta (a signature is none), TTFAT at the first text,
// the prompt as input tokens and the cache's, the output tokens at the
// end, a cut answer by its stop_reason, and no [DONE] needed.
func TestMessagesStreamRead(t *testing.T) {
	quiet.Wire(t, func() { testMessagesStreamRead(t) })
}

func testMessagesStreamRead(t *testing.T) {
	for _, c := range []struct {
		name                     string
		stream                   string
		chunks, prompt, out, cac int
		cached, length           bool
		text                     string
	}{
		{"vLLM", vllmMessagesStream(12, []string{"Let", " me"}, []string{"Four", "."}, "end_turn"), 4, 12, 4, 0, false, false, "Four."},
		{"vLLM, cut", vllmMessagesStream(12, nil, []string{"a", "b"}, "max_tokens"), 2, 12, 2, 0, false, true, "ab"},
		{"Anthropic", anthropicMessagesStream(), 3, 12, 3, 8, true, true, "Hi there"},
		{"llama-server, nothing said", llamaEmptyMessagesStream, 0, 1328, 0, 1327, true, false, ""},
		{"llama-server, one token and no start", llamaStartlessMessagesStream, 0, 0, 1, 0, false, true, ""},
	} {
		url := oddServer(t, sse(c.stream))
		cl, err := NewClient(Target{BaseURL: url, Model: "m", Endpoint: kind.Name("messages"), Timeout: 5 * time.Second}, 1)
		if err != nil {
			t.Fatal(err)
		}
		rec := &record.Record{}
		cl.Do(&workload.Request{Messages: []workload.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "x"}}, MaxTokens: 10}, rec, true)
		cl.Close()
		if rec.Class != "" || rec.Chunks != c.chunks || rec.PromptTokens != c.prompt || rec.CompletionTokens != c.out ||
			rec.CachedReported != c.cached || rec.CachedTokens != c.cac || rec.FinishLength != c.length || string(rec.Text) != c.text {
			t.Errorf("%s: class %q (%s), %d chunks, usage %d/%d, cached %v %d, cut %v, text %q; want %d chunks, %d/%d, %v %d, %v, %q", c.name,
				rec.Class, rec.Message, rec.Chunks, rec.PromptTokens, rec.CompletionTokens, rec.CachedReported, rec.CachedTokens, rec.FinishLength, rec.Text,
				c.chunks, c.prompt, c.out, c.cached, c.cac, c.length, c.text)
		}
	}
}

// TestMessagesBody: the system prompt goes beside the messages, images as
// base64 sources, a call's tool use and its result as Anthropic's blocks,
// tools with an input_schema and tool_choice "any" for required, and
// max_tokens always.
func TestMessagesBody(t *testing.T) {
	c, err := NewClient(Target{BaseURL: "http://127.0.0.1:1/v1", Model: "claude", Endpoint: kind.Name("messages"), ToolChoice: "required",
		Tools: []workload.Tool{{Name: "lookup", Parameters: []byte(`{"type":"object"}`)}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.uri != "http://127.0.0.1:1/v1/messages" {
		t.Errorf("uri %s", c.uri)
	}
	b := string(c.appendBody(nil, &workload.Request{Messages: []workload.Message{
		{Role: "system", Content: "be brief"},
		{Role: "user", Content: "what is this?", Images: []string{"data:image/png;base64,AAAA"}},
		{Role: "assistant", ToolCalls: []workload.ToolCall{{ID: "toolu_1", Name: "lookup", Arguments: `{"q":"x"}`}}},
		{Role: "tool", ToolCallID: "toolu_1", Content: "42"},
	}}))
	for _, want := range []string{
		`"max_tokens":4096`, `"system":"be brief"`,
		`{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"q":"x"}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"42"}]}`,
		`"tools":[{"name":"lookup","input_schema":{"type":"object"}}]`, `"tool_choice":{"type":"any"}`, `"stream":true`,
	} {
		if !strings.Contains(b, want) {
			t.Errorf("the body lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(b, `"role":"system"`) {
		t.Errorf("a system message among the messages:\n%s", b)
	}
}
