package transport

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

func init() { register("messages", messagesProtocol{}) }

// messagesProtocol is Anthropic's Messages API, POST /v1/messages, as
// Anthropic and vLLM serve it (vLLM's vllm/entrypoints/anthropic, read
// 2026-12): the system prompt beside the messages, max_tokens required,
// tools with an input_schema; a stream of typed events ("event: NAME"
// and a JSON object whose type is NAME): message_start with the input
// tokens, a content block at a time (content_block_start, its
// text_delta, thinking_delta or input_json_delta deltas,
// content_block_stop), message_delta with the stop_reason and the output
// tokens, and message_stop.
type messagesProtocol struct{}

// defaultMaxTokens is the budget sent when a request names none: the API
// requires one.
const defaultMaxTokens = 4096

func (messagesProtocol) appendBody(b *body, r *workload.Request, model string) {
	if b.field("model") {
		b.dst = wire.AppendString(b.dst, model)
	}
	if b.field("max_tokens") {
		n := r.MaxTokens
		if n <= 0 {
			n = defaultMaxTokens
		}
		b.dst = strconv.AppendInt(b.dst, int64(n), 10)
	}
	var system []string
	for _, m := range r.Messages {
		if m.Role == "system" {
			system = append(system, m.Content)
		}
	}
	if len(system) > 0 && b.field("system") {
		b.dst = wire.AppendString(b.dst, strings.Join(system, "\n"))
	}
	if b.field("messages") {
		b.dst = append(b.dst, '[')
		n := 0
		for _, m := range r.Messages {
			if m.Role == "system" {
				continue
			}
			if n++; n > 1 {
				b.dst = append(b.dst, ',')
			}
			b.dst = appendAnthropicMessage(b.dst, m)
		}
		b.dst = append(b.dst, ']')
	}
	writeTools(b, r)
	if (r.IgnoreEOS || b.ignoreEOS) && b.field("ignore_eos") {
		b.dst = append(b.dst, "true"...)
	}
	if b.field("stream") {
		b.dst = append(b.dst, "true"...)
	}
}

// appendAnthropicMessage writes one message: its text alone, or content
// blocks for images (base64 sources, or URLs), an assistant's tool_use
// calls, and a tool's result (a user message's tool_result block).
func appendAnthropicMessage(dst []byte, m workload.Message) []byte {
	role := m.Role
	if role == "tool" {
		role = "user"
	}
	dst = append(dst, `{"role":`...)
	dst = wire.AppendString(dst, role)
	dst = append(dst, `,"content":`...)
	switch {
	case m.Role == "tool":
		dst = append(dst, `[{"type":"tool_result","tool_use_id":`...)
		dst = wire.AppendString(dst, m.ToolCallID)
		dst = append(dst, `,"content":`...)
		dst = wire.AppendString(dst, m.Content)
		return append(dst, "}]}"...)
	case len(m.Images) == 0 && len(m.ToolCalls) == 0:
		dst = wire.AppendString(dst, m.Content)
		return append(dst, '}')
	}
	dst = append(dst, '[')
	n := 0
	if m.Content != "" || len(m.ToolCalls) == 0 {
		dst = append(dst, `{"type":"text","text":`...)
		dst = wire.AppendString(dst, m.Content)
		dst = append(dst, '}')
		n++
	}
	for _, url := range m.Images {
		if n++; n > 1 {
			dst = append(dst, ',')
		}
		dst = appendImageSource(dst, url)
	}
	for _, c := range m.ToolCalls {
		if n++; n > 1 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"tool_use","id":`...)
		dst = wire.AppendString(dst, c.ID)
		dst = append(dst, `,"name":`...)
		dst = wire.AppendString(dst, c.Name)
		dst = append(dst, `,"input":`...)
		if args := bytes.TrimSpace([]byte(c.Arguments)); wholeObject(args) {
			dst = append(dst, args...)
		} else {
			dst = append(dst, "{}"...)
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// appendImageSource writes an image block: a data URL as its base64
// source, any other URL as a url source.
func appendImageSource(dst []byte, url string) []byte {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		if media, data, ok := strings.Cut(rest, ";base64,"); ok {
			dst = append(dst, `{"type":"image","source":{"type":"base64","media_type":`...)
			dst = wire.AppendString(dst, media)
			dst = append(dst, `,"data":`...)
			dst = wire.AppendString(dst, data)
			return append(dst, "}}"...)
		}
	}
	dst = append(dst, `{"type":"image","source":{"type":"url","url":`...)
	dst = wire.AppendString(dst, url)
	return append(dst, "}}"...)
}

var (
	keyInputTokens   = []byte(`"input_tokens":`)
	keyCacheRead     = []byte(`"cache_read_input_tokens":`)
	keyCacheCreation = []byte(`"cache_creation_input_tokens":`)
	keyStopReason    = []byte(`"stop_reason":`)
	keyThinkingText  = []byte(`"thinking":`)
	keyPartialJSON   = []byte(`"partial_json":`)
	keyContentBlock  = []byte(`"content_block":`)
)

// scan reads one event by its type, read as JSON (a top-level member,
// wherever it stands and however it is spaced), and remembers the input
// tokens of message_start for the end, whose usage may not repeat them.
func (messagesProtocol) scan(p []byte, c *chunk, pr *progress) {
	*c = chunk{}
	switch string(memberString(p, keyType)) {
	case "content_block_delta":
		d := objectAfter(p, keyDelta)
		switch string(memberString(d, keyType)) {
		case "text_delta":
			if v := valueAfter(d, keyText); nonEmptyValue(v) {
				c.content, c.answer, c.answerTail = true, true, v
			}
		case "thinking_delta":
			v := valueAfter(d, keyThinkingText)
			c.content, c.reasoning, c.reasoningTail = nonEmptyValue(v), nonEmptyValue(v), v
		case "input_json_delta":
			c.content, c.tool = nonEmptyValue(valueAfter(d, keyPartialJSON)), true
			c.tool = c.content
		}
	case "content_block_start":
		c.toolItem = string(memberString(objectAfter(p, keyContentBlock), keyType)) == "tool_use"
	case "message_start":
		messagesUsage(objectAfter(objectAfter(p, []byte(`"message":`)), keyUsage), c, pr)
	case "message_delta":
		c.finished = true
		switch string(stringValue(valueAfter(objectAfter(p, keyDelta), keyStopReason))) {
		case "max_tokens":
			c.finishLength = true
		case "tool_use":
			c.finishTool = true
		}
		messagesUsage(objectAfter(p, keyUsage), c, pr)
	case "message_stop":
		c.terminal = true
	case "error":
		c.hasError = true
	}
}

// messagesUsage reads a usage object: the prompt is its input tokens and
// the cache's (Anthropic counts cache reads and writes apart from
// input_tokens; vLLM counts them within, and writes neither).
func messagesUsage(u []byte, c *chunk, pr *progress) {
	if len(u) == 0 {
		return
	}
	if in, ok := intAfter(u, keyInputTokens); ok {
		read, _ := intAfter(u, keyCacheRead)
		created, _ := intAfter(u, keyCacheCreation)
		pr.prompt, pr.promptSeen = in+read+created, true
		if _, ok := intAfter(u, keyCacheRead); ok {
			pr.cached, pr.cachedSeen = read, true
		}
	}
	c.usage = true
	c.promptTokens = pr.prompt
	c.checkPrompt(u, keyInputTokens)
	c.cachedTokens, c.cachedSeen = plausibleCount(pr.cached, pr.cachedSeen)
	var ok bool
	c.outTokens, ok = intAfter(u, keyOutTokens)
	c.usageOdd = !ok && bytes.Contains(u, keyOutTokens)
}

// text adds a text_delta's text to dst.
func (messagesProtocol) text(dst, payload []byte) []byte {
	d := objectAfter(payload, keyDelta)
	if string(memberString(d, keyType)) != "text_delta" {
		return dst
	}
	return appendStringAfter(dst, d, keyText)
}

// keepCall keeps a tool_use block as the next turn sends it back: its id
// and name when it starts, each input_json_delta's piece after.
func (messagesProtocol) keepCall(rec *record.Record, payload []byte) {
	if b := objectAfter(payload, keyContentBlock); len(b) > 0 {
		var c record.ToolCall
		if id, ok := appendString(nil, b, keyID); ok {
			c.ID = string(id)
		}
		if n, ok := appendString(nil, b, keyName); ok {
			c.Name = string(n)
		}
		rec.ToolCalls = append(rec.ToolCalls, c)
		return
	}
	if len(rec.ToolCalls) > 0 {
		piece, _ := appendString(nil, objectAfter(payload, keyDelta), keyPartialJSON)
		rec.ToolCalls[len(rec.ToolCalls)-1].Arguments += string(piece)
	}
}
