package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kneebench/knee/workload/wire"
)

// Anthropic's Messages API, POST /v1/messages, as vLLM serves it
// (vllm/entrypoints/anthropic, read 2026-12): the request turned into a
// chat one (the system prompt first, content blocks as text, images,
// tool uses and results), the answer as typed events written compactly,
// each "event: TYPE" and a JSON object whose type comes first:
// message_start (with the input tokens, at once), a content block at a
// time (a thinking block, then text or a tool_use), message_delta with
// the stop_reason and both counts, message_stop.
func init() { register("messages", decodeAnthropic, messagesAnswer{}) }

// messagesRequest is the body of a Messages request. Fields knee does
// not act on are accepted and ignored, as vLLM does.
type messagesRequest struct {
	Model     *string         `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	Messages  json.RawMessage `json:"messages"`
	System    json.RawMessage `json:"system"`
	Stream    *bool           `json:"stream"`
	IgnoreEOS *bool           `json:"ignore_eos"`
	Tools     json.RawMessage `json:"tools"`
	// ToolChoice is {type: auto | any | none | tool, name}.
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Thinking *struct {
		Type string `json:"type"`
	} `json:"thinking"`
	OutputConfig *struct {
		Effort *string `json:"effort"`
	} `json:"output_config"`
	ChatTemplateKwargs map[string]json.RawMessage `json:"chat_template_kwargs"`
	StopSequences      []string                   `json:"stop_sequences"`
	Temperature        *float64                   `json:"temperature"`
	TopP               *float64                   `json:"top_p"`
}

// block is a content block of a message.
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Thinking  *string         `json:"thinking"`
	Source    json.RawMessage `json:"source"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// decodeAnthropic parses and validates a Messages request; every error
// names its field.
func decodeAnthropic(_ *Server, body []byte) (*decoded, error) {
	if !utf8.Valid(body) {
		return nil, badRequest("", "the request body is not valid UTF-8")
	}
	var r messagesRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&r); err != nil || dec.More() {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, badRequest(te.Field, "invalid type for '%s': expected %s", te.Field, jsonKind(te.Type.Kind().String()))
		}
		return nil, badRequest("", "the request body is not one valid JSON object")
	}
	switch {
	case r.Model == nil || *r.Model == "":
		return nil, badRequest("model", "model: Field required")
	case r.MaxTokens == nil:
		return nil, badRequest("max_tokens", "max_tokens: Field required")
	case *r.MaxTokens < 1:
		return nil, badRequest("max_tokens", "max_tokens must be positive, got %d", *r.MaxTokens)
	}
	chk := apiRequest{Temperature: r.Temperature, TopP: r.TopP}
	if err := chk.checkSampling(true); err != nil {
		return nil, err
	}
	d := &decoded{Model: *r.Model, IncludeUsage: true, Stream: r.Stream != nil && *r.Stream}
	d.Gen = GenRequest{Chat: true, Model: d.Model, MaxTokens: r.MaxTokens, IgnoreEOS: r.IgnoreEOS != nil && *r.IgnoreEOS, Stop: r.StopSequences}
	if err := d.messagesOf(r); err != nil {
		return nil, err
	}
	return d, d.thinkingOf(r)
}

// messagesOf reads the system prompt, the messages and the tools.
func (d *decoded) messagesOf(r messagesRequest) error {
	if sys, err := systemOf(r.System); err != nil {
		return err
	} else if sys != "" {
		d.Gen.Messages = append(d.Gen.Messages, Message{Role: "system", Text: sys})
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(r.Messages, &msgs); err != nil || len(msgs) == 0 {
		return badRequest("messages", "messages: a non-empty list of {role, content} is required")
	}
	for i, m := range msgs {
		param := fmt.Sprintf("messages.%d", i)
		if m.Role != "user" && m.Role != "assistant" && m.Role != "system" {
			return badRequest(param+".role", "%s.role: Input should be 'user', 'assistant' or 'system'", param)
		}
		out, err := d.contentOf(m.Role, m.Content, param+".content")
		if err != nil {
			return err
		}
		d.Gen.Messages = append(d.Gen.Messages, out...)
	}
	return d.toolsOf(r)
}

// systemOf is the system prompt: a string, or text blocks joined.
func systemOf(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", badRequest("system", "system: expected a string or a list of text blocks")
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" && bl.Text != nil {
			b.WriteString(*bl.Text)
		}
	}
	return b.String(), nil
}

// contentOf turns a message's content into chat messages: its text
// blocks (and an assistant's tool uses, rendered into the prompt as the
// template would) as one message, and each tool_result as a tool message.
func (d *decoded) contentOf(role string, raw json.RawMessage, param string) ([]Message, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Message{{Role: role, Text: s}}, nil
	}
	var blocks []block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, badRequest(param, "%s: expected a string or a list of content blocks", param)
	}
	var out []Message
	var text strings.Builder
	for i, bl := range blocks {
		p := fmt.Sprintf("%s.%d", param, i)
		switch bl.Type {
		case "text":
			if bl.Text != nil {
				text.WriteString(*bl.Text)
			}
		case "thinking", "redacted_thinking":
		case "image":
			url, err := imageSourceURL(bl.Source, p+".source")
			if err != nil {
				return nil, err
			}
			d.images.Add(url, p)
		case "tool_use":
			text.WriteString(bl.Name)
			text.Write(bl.Input)
		case "tool_result":
			result, _ := systemOf(bl.Content)
			out = append(out, Message{Role: "tool", Text: result})
		default:
			return nil, badRequest(p+".type", "content block type %q is not supported", bl.Type)
		}
	}
	if text.Len() > 0 || len(out) == 0 {
		out = append([]Message{{Role: role, Text: text.String()}}, out...)
	}
	return out, nil
}

// imageSourceURL is an image block's source as the URL a chat request
// would give (a base64 source as a data URL), as JSON.
func imageSourceURL(raw json.RawMessage, param string) (json.RawMessage, error) {
	var src struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	}
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, badRequest(param, "%s: expected {type, media_type, data} or {type: url, url}", param)
	}
	url := src.URL
	if src.Type != "url" {
		url = "data:" + src.MediaType + ";base64," + src.Data
	}
	b, _ := json.Marshal(url)
	return b, nil
}

// toolsOf reads the tools (names and input schemas) and tool_choice.
func (d *decoded) toolsOf(r messagesRequest) error {
	if !isNull(r.Tools) {
		var tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(r.Tools, &tools); err != nil {
			return badRequest("tools", "tools: expected a list of {name, description, input_schema}")
		}
		for i, t := range tools {
			if t.Name == "" || isNull(t.InputSchema) {
				return badRequest(fmt.Sprintf("tools.%d", i), "tools.%d: a tool needs a name and an input_schema", i)
			}
			d.Gen.Tools = append(d.Gen.Tools, t.Name)
			if key := argumentKey(t.InputSchema); key != "" {
				if d.Gen.ToolArgs == nil {
					d.Gen.ToolArgs = map[string]string{}
				}
				d.Gen.ToolArgs[t.Name] = key
			}
		}
		d.toolsFirst = withTools(&d.Gen, r.Tools)
	}
	if c := r.ToolChoice; c != nil {
		switch c.Type {
		case "auto", "none":
			d.Gen.ToolChoice = c.Type
		case "any":
			d.Gen.ToolChoice = "required"
		case "tool":
			d.Gen.ToolChoice = c.Name
		default:
			return badRequest("tool_choice.type", "tool_choice.type must be auto, any, tool or none, got %q", c.Type)
		}
	}
	return nil
}

// thinkingOf reads what shapes a reasoning model's thinking: thinking
// {type: disabled}, output_config.effort, chat_template_kwargs'
// enable_thinking.
func (d *decoded) thinkingOf(r messagesRequest) error {
	if r.Thinking != nil && r.Thinking.Type == "disabled" {
		d.noThinking = true
	}
	if v, ok := r.ChatTemplateKwargs["enable_thinking"]; ok && string(bytes.TrimSpace(v)) == "false" {
		d.noThinking = true
	}
	if c := r.OutputConfig; c != nil && c.Effort != nil {
		switch e := *c.Effort; e {
		case "low", "medium", "high":
			d.effort = e
		default:
			return badRequest("output_config.effort", "output_config.effort must be low, medium or high, got %q", e)
		}
	}
	return nil
}

// messagesAnswer writes a Messages answer. Its blocks follow from the
// token's place alone: a thinking block over the thought tokens, then a
// text or tool_use block over the rest.
type messagesAnswer struct{}

func (messagesAnswer) open(r *run) {
	r.setThinking()
	r.event = make([]byte, chunkRoom, 512)
	r.buf = append(r.buf, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\""...)
	r.buf = append(r.buf, r.msgID()...)
	r.buf = append(r.buf, `","content":[],"model":`...)
	r.buf = wire.AppendString(r.buf, r.model)
	r.buf = append(r.buf, `,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	r.buf = strconv.AppendInt(r.buf, int64(r.plan.PromptTokens), 10)
	r.buf = append(r.buf, ",\"output_tokens\":0}}}\n\n"...)
}

// block is the index of the block token i is in.
func (r *run) block(i int) int {
	if r.thinking > 0 && i >= r.thinking {
		return 1
	}
	return 0
}

// token is a thinking, text or input_json delta, its block started
// first when it is the block's first (and the block before it stopped).
func (messagesAnswer) token(r *run, i int) []byte {
	e := r.event[:chunkRoom]
	field, typ := "text", "text_delta"
	switch {
	case i < r.thinking:
		field, typ = "thinking", "thinking_delta"
	case r.plan.ToolName != "":
		field, typ = "partial_json", "input_json_delta"
	}
	if i == 0 || i == r.thinking {
		if i > 0 {
			e = stopBlock(e, 0)
		}
		e = r.startBlock(e, i)
	}
	e = append(e, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\""...)
	e = append(e, typ...)
	e = append(e, `","`...)
	e = append(e, field...)
	e = append(e, `":`...)
	e = wire.AppendString(e, r.plan.Tokens[i])
	e = append(e, `},"index":`...)
	e = strconv.AppendInt(e, int64(r.block(i)), 10)
	r.event = append(e, "}\n\n"...)
	return r.event
}

// startBlock opens the block token i is the first of.
func (r *run) startBlock(e []byte, i int) []byte {
	e = append(e, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"content_block\":"...)
	switch {
	case i < r.thinking:
		e = append(e, `{"type":"thinking","thinking":""}`...)
	case r.plan.ToolName != "":
		e = append(e, `{"type":"tool_use","id":"toolu_knee-`...)
		e = strconv.AppendInt(e, r.id, 10)
		e = append(e, `","name":`...)
		e = wire.AppendString(e, r.plan.ToolName)
		e = append(e, `,"input":{}}`...)
	default:
		e = append(e, `{"type":"text","text":""}`...)
	}
	e = append(e, `,"index":`...)
	e = strconv.AppendInt(e, int64(r.block(i)), 10)
	return append(e, "}\n\n"...)
}

// stopBlock closes block index.
func stopBlock(e []byte, index int) []byte {
	e = append(e, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"...)
	e = strconv.AppendInt(e, int64(index), 10)
	return append(e, "}\n\n"...)
}

// stopReason is the answer's stop_reason, as vLLM maps finish reasons.
func (r *run) stopReason() string {
	switch r.plan.FinishReason {
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	}
	return "end_turn"
}

func (messagesAnswer) close(r *run, _ StreamInfo) {
	if r.emitted > 0 {
		r.buf = stopBlock(r.buf, r.block(r.emitted-1))
	}
	r.buf = append(r.buf, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\""...)
	r.buf = append(r.buf, r.stopReason()...)
	r.buf = append(r.buf, `"},"usage":{"input_tokens":`...)
	r.buf = strconv.AppendInt(r.buf, int64(r.plan.PromptTokens), 10)
	r.buf = append(r.buf, `,"output_tokens":`...)
	r.buf = strconv.AppendInt(r.buf, int64(r.emitted), 10)
	r.buf = append(r.buf, "}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
}

func (messagesAnswer) shutdown(r *run) {
	r.buf = append(r.buf, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"the server is shutting down\"}}\n\n"...)
}

// body is the whole message: its thinking, text or tool_use blocks.
func (messagesAnswer) body(r *run, _ StreamInfo) []byte {
	r.setThinking()
	th := min(r.thinking, r.emitted)
	b := append([]byte(`{"id":"`), r.msgID()...)
	b = append(b, `","type":"message","role":"assistant","content":[`...)
	if th > 0 {
		b = append(b, `{"type":"thinking","thinking":`...)
		b = wire.AppendString(b, strings.Join(r.plan.Tokens[:th], ""))
		b = append(b, '}')
	}
	if rest := strings.Join(r.plan.Tokens[th:r.emitted], ""); rest != "" {
		if th > 0 {
			b = append(b, ',')
		}
		if r.plan.ToolName != "" {
			b = append(b, `{"type":"tool_use","id":"toolu_knee-`...)
			b = strconv.AppendInt(b, r.id, 10)
			b = append(b, `","name":`...)
			b = wire.AppendString(b, r.plan.ToolName)
			b = append(b, `,"input":`...)
			b = append(b, rest...)
			b = append(b, '}')
		} else {
			b = append(b, `{"type":"text","text":`...)
			b = wire.AppendString(b, rest)
			b = append(b, '}')
		}
	}
	b = append(b, `],"model":`...)
	b = wire.AppendString(b, r.model)
	b = append(b, `,"stop_reason":"`...)
	b = append(b, r.stopReason()...)
	b = append(b, `","stop_sequence":null,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(r.plan.PromptTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(r.emitted), 10)
	return append(b, "}}"...)
}
