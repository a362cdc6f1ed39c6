// Package wire is what both sides of the wire write alike: JSON strings,
// tools as an API lays them out, a query's documents. The client sends
// these bytes, knee sim reads them and the predictor counts them, so a
// prompt holds the same tokens on every side. It imports nothing of knee
// but the kind table, so every room may use it.
package wire

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/kneebench/knee/workload/kind"
)

// AppendString appends s as a JSON string, escaped as encoding/json
// escapes it but for <, > and & (which it leaves, as Python's json and
// every server does), with no allocation.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Tool is a function a request offers: its name, description and JSON
// schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolChoices are the tool_choice words every API knows: the model may
// call a tool, must call one, or must not.
var ToolChoices = []string{"auto", "required", "none"}

// AppendTools writes tools as an API lays them out (kind.ToolLayout):
// chat nests each under "function", the Responses API lays it flat,
// Anthropic's Messages API names its schema input_schema. Simulated
// servers render the same bytes into the prompt.
func AppendTools(dst []byte, tools []Tool, l kind.ToolLayout) []byte {
	dst = append(dst, '[')
	for i, t := range tools {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		if l.Typed {
			dst = append(dst, `"type":"function",`...)
		}
		if l.Nested {
			dst = append(dst, `"function":{`...)
		}
		dst = append(dst, `"name":`...)
		dst = AppendString(dst, t.Name)
		if t.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = AppendString(dst, t.Description)
		}
		if len(t.Parameters) > 0 {
			dst = append(dst, ',')
			dst = AppendString(dst, l.Schema)
			dst = append(dst, ':')
			dst = append(dst, t.Parameters...)
		}
		if l.Nested {
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// AppendToolChoice writes tool_choice as an API takes it: auto, required
// and none as words (or {"type": word}), anything else as the tool of
// that name.
func AppendToolChoice(dst []byte, choice string, l kind.ToolLayout) []byte {
	if slices.Contains(ToolChoices, choice) {
		if choice == "required" {
			choice = l.Required
		}
		if !l.Objects {
			return AppendString(dst, choice)
		}
		dst = append(dst, `{"type":`...)
		dst = AppendString(dst, choice)
		return append(dst, '}')
	}
	dst = append(dst, `{"type":`...)
	dst = AppendString(dst, l.Named)
	if l.Nested {
		dst = append(dst, `,"function":{"name":`...)
		dst = AppendString(dst, choice)
		return append(dst, "}}"...)
	}
	dst = append(dst, `,"name":`...)
	dst = AppendString(dst, choice)
	return append(dst, '}')
}

// QueryWords is a query's length in words: a question is shorter than
// the passages it ranks.
const QueryWords = 32

// Pairs is a paired request's query and documents (kind.Pairs): the first
// input's first QueryWords words, then the other inputs (the whole text
// when there is one input or none).
func Pairs(inputs []string, text string) (string, []string) {
	if len(inputs) < 2 {
		return firstWords(text, QueryWords), []string{text}
	}
	return firstWords(inputs[0], QueryWords), inputs[1:]
}

func firstWords(s string, n int) string {
	words := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' && i > 0 && s[i-1] != ' ' {
			if words++; words == n {
				return s[:i]
			}
		}
	}
	return s
}
