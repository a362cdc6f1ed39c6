package transport

import (
	"bytes"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

// writeTools adds a request's tools (its own, or the target's) and the
// target's tool_choice to b, laid out as the kind lays them.
func writeTools(b *body, r *workload.Request) {
	tools := b.tools
	if r.Tools != nil {
		tools = r.Tools
	}
	if len(tools) == 0 {
		return
	}
	if b.field("tools") {
		b.dst = wire.AppendTools(b.dst, tools, b.layout)
	}
	if b.toolChoice != "" && b.field("tool_choice") {
		b.dst = wire.AppendToolChoice(b.dst, b.toolChoice, b.layout)
	}
}

// appendChatMessage writes one chat message: an assistant's tool calls
// under tool_calls (its content null when it said nothing else), a tool
// message with the call it answers.
func appendChatMessage(dst []byte, m workload.Message) []byte {
	dst = append(dst, `{"role":`...)
	dst = wire.AppendString(dst, m.Role)
	dst = append(dst, `,"content":`...)
	switch {
	case len(m.Images) > 0:
		dst = appendParts(dst, m, "text", func(dst []byte, url string) []byte {
			dst = append(dst, `{"type":"image_url","image_url":{"url":`...)
			dst = wire.AppendString(dst, url)
			return append(dst, "}}"...)
		})
	case m.Content == "" && len(m.ToolCalls) > 0:
		dst = append(dst, "null"...)
	default:
		dst = wire.AppendString(dst, m.Content)
	}
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = wire.AppendString(dst, m.ToolCallID)
	}
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i, c := range m.ToolCalls {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = wire.AppendString(dst, c.ID)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = wire.AppendString(dst, c.Name)
			dst = append(dst, `,"arguments":`...)
			dst = wire.AppendString(dst, c.Arguments)
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendInputItems writes one message as Responses input items: a
// message item, a function_call item per tool call, a tool message as
// its function_call_output.
func appendInputItems(dst []byte, m workload.Message) []byte {
	if m.Role == "tool" {
		dst = append(dst, `{"type":"function_call_output","call_id":`...)
		dst = wire.AppendString(dst, m.ToolCallID)
		dst = append(dst, `,"output":`...)
		dst = wire.AppendString(dst, m.Content)
		return append(dst, '}')
	}
	n := 0
	if m.Content != "" || len(m.ToolCalls) == 0 || len(m.Images) > 0 {
		if m.Role == "assistant" {
			// An answer sent back names its type: llama-server takes an
			// assistant item only so ("Cannot determine type of 'item'"),
			// and OpenAI's, vLLM's and llm-d's take it either way.
			dst = append(dst, `{"type":"message","role":`...)
		} else {
			dst = append(dst, `{"role":`...)
		}
		dst = wire.AppendString(dst, m.Role)
		dst = append(dst, `,"content":`...)
		if len(m.Images) > 0 {
			dst = appendParts(dst, m, "input_text", func(dst []byte, url string) []byte {
				dst = append(dst, `{"type":"input_image","image_url":`...)
				dst = wire.AppendString(dst, url)
				return append(dst, '}')
			})
		} else {
			dst = wire.AppendString(dst, m.Content)
		}
		dst = append(dst, '}')
		n++
	}
	for _, c := range m.ToolCalls {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, `{"type":"function_call","call_id":`...)
		dst = wire.AppendString(dst, c.ID)
		dst = append(dst, `,"name":`...)
		dst = wire.AppendString(dst, c.Name)
		dst = append(dst, `,"arguments":`...)
		dst = wire.AppendString(dst, c.Arguments)
		dst = append(dst, '}')
	}
	return dst
}

var (
	keyIndex     = []byte(`"index":`)
	keyName      = []byte(`"name":`)
	keyArguments = []byte(`"arguments":`)
	keyCallID    = []byte(`"call_id":`)
	keyItem      = []byte(`"item":`)
	evItemAdded  = []byte("output_item.added")
)

// keepToolCall adds what a chat chunk says of its tool call to rec's
// calls (kept with the text, for a call's next turn): a new index opens
// a call with its id and name, every chunk adds its arguments' piece.
func keepToolCall(rec *record.Record, payload []byte) {
	i := bytes.Index(payload, keyToolCalls)
	if i < 0 {
		return
	}
	p := payload[i:]
	idx, _ := intAfter(p, keyIndex)
	for len(rec.ToolCalls) <= idx && idx < 64 {
		rec.ToolCalls = append(rec.ToolCalls, record.ToolCall{})
	}
	if idx >= len(rec.ToolCalls) {
		return
	}
	c := &rec.ToolCalls[idx]
	if id, ok := appendString(nil, p, keyID); ok && c.ID == "" {
		c.ID = string(id)
	}
	if name, ok := appendString(nil, p, keyName); ok && c.Name == "" {
		c.Name = string(name)
	}
	if args, ok := appendString(nil, p, keyArguments); ok {
		c.Arguments += string(args)
	}
}

// keepResponsesToolCall is keepToolCall for the Responses API: a
// function_call item's output_item.added opens a call (its call_id and
// name), each arguments delta adds to the last.
func keepResponsesToolCall(rec *record.Record, payload []byte) {
	name, _ := bytes.CutPrefix(typeFrom(payload, respPrefix), respPrefix)
	switch {
	case bytes.Equal(name, evItemAdded) && string(memberString(objectAfter(payload, keyItem), keyType)) == "function_call":
		var c record.ToolCall
		if id, ok := appendString(nil, payload, keyCallID); ok {
			c.ID = string(id)
		}
		if n, ok := appendString(nil, payload, keyName); ok {
			c.Name = string(n)
		}
		rec.ToolCalls = append(rec.ToolCalls, c)
	case bytes.Equal(name, evToolArgs) && len(rec.ToolCalls) > 0:
		d, _ := appendString(nil, payload, keyDelta)
		rec.ToolCalls[len(rec.ToolCalls)-1].Arguments += string(d)
	}
}

// appendParts writes a message with images as content parts: its text
// (a part of type textType), then each image as image writes it.
func appendParts(dst []byte, m workload.Message, textType string, image func([]byte, string) []byte) []byte {
	dst = append(dst, `[{"type":`...)
	dst = wire.AppendString(dst, textType)
	dst = append(dst, `,"text":`...)
	dst = wire.AppendString(dst, m.Content)
	dst = append(dst, '}')
	for _, url := range m.Images {
		dst = append(dst, ',')
		dst = image(dst, url)
	}
	return append(dst, ']')
}
