package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/kneebench/knee/workload/wire"
)

// toolCallID is the id of the answer's call.
func (r *run) toolCallID() string { return "chatcmpl-tool-knee-" + strconv.FormatInt(r.id, 10) }

// toolEnvelope sets up a chat stream's call: the first piece's event
// carries the call's id, type and name, later ones their index and
// arguments only, as vLLM's tool parsers stream them.
func (r *run) toolEnvelope() {
	if r.plan.ToolName == "" {
		return
	}
	base := string(r.prefix[:len(r.prefix)-len(`"content":`)])
	r.toolFirst = []byte(base + `"tool_calls":[{"id":"` + r.toolCallID() + `","type":"function","index":0,"function":{"name":` +
		jsonString(r.plan.ToolName) + `,"arguments":`)
	r.toolPrefix = []byte(base + `"tool_calls":[{"index":0,"function":{"arguments":`)
	r.toolEvent = make([]byte, chunkRoom, chunkRoom+len(r.toolFirst)+len(r.suffix)+64)
}

// toolTokenEvent is tokenEvent for a piece of the call's arguments.
func (r *run) toolTokenEvent(tok string, first bool) []byte {
	head := r.toolPrefix
	if first {
		head = r.toolFirst
	}
	e := append(r.toolEvent[:chunkRoom], head...)
	e = wire.AppendString(e, tok)
	e = append(e, "}}]"...)
	e = append(e, r.suffix...)
	r.toolEvent = e
	return e
}

// toolsOf reads a request's tools: their names, from chat's
// {"type": "function", "function": {"name"}} or the Responses API's flat
// {"type": "function", "name"}.
func toolsOf(raw json.RawMessage, args map[string]string) ([]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
		Function   *struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest("tools", "invalid 'tools': expected a list of function tools")
	}
	names := make([]string, 0, len(items))
	for i, it := range items {
		name, params := it.Name, it.Parameters
		if it.Function != nil {
			name, params = it.Function.Name, it.Function.Parameters
		}
		if key := argumentKey(params); key != "" && args != nil {
			args[name] = key
		}
		if it.Type != "function" || name == "" {
			return nil, badRequest(fmt.Sprintf("tools[%d]", i), "tools[%d] must be a function with a name", i)
		}
		names = append(names, name)
	}
	return names, nil
}

// withTools puts a request's tools (their JSON as sent) before its
// messages, as a system text: a chat template renders them into the
// prompt there (Hermes', Qwen's, Llama's), so they count as prompt
// tokens and, the same for every request, as a shared prefix.
func withTools(g *GenRequest, raw json.RawMessage) bool {
	if len(g.Tools) == 0 {
		return false
	}
	g.Messages = append([]Message{{Role: "system", Text: string(raw)}}, g.Messages...)
	return true
}

// toolChoiceOf reads tool_choice: auto, none, required, or a function by
// name (chat's {"type": "function", "function": {"name"}}, the
// Responses API's {"type": "function", "name"}).
func toolChoiceOf(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
		return "", badRequest("tool_choice", "tool_choice must be auto, none, required or a function, got %q", s)
	}
	var named struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil || named.Type != "function" {
		return "", badRequest("tool_choice", "tool_choice must be auto, none, required or {\"type\": \"function\", ...}")
	}
	if named.Function != nil {
		named.Name = named.Function.Name
	}
	if named.Name == "" {
		return "", badRequest("tool_choice", "tool_choice names no function")
	}
	return named.Name, nil
}

// checkTools refuses, as vLLM does, a tool_choice the request's tools
// cannot meet, and one that needs a call from a model that calls none.
func checkTools(g *GenRequest, spec *ToolSpec, model string) error {
	c := g.ToolChoice
	switch {
	case c == "" || c == "auto" || c == "none":
		return nil
	case len(g.Tools) == 0:
		return badRequest("tool_choice", "tool_choice %q needs tools", c)
	case !ToolNamed(c, g.Tools):
		return badRequest("tool_choice", "tool_choice names %q, which is not among the tools", c)
	case spec == nil:
		return badRequest("tool_choice", "model %s calls no tools (give it tools: in the models file): tool_choice %q cannot be honoured", model, c)
	}
	return nil
}

// argumentKey is the argument a call of a tool with this JSON schema
// fills, as a model that follows the schema would: its first required
// string property, else its first required one, else its first string
// property by name, else its first ("" when it names none). The value is
// words, a string.
func argumentKey(schema json.RawMessage) string {
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if isNull(schema) || json.Unmarshal(schema, &s) != nil {
		return ""
	}
	for _, r := range s.Required {
		if p, ok := s.Properties[r]; ok && p.Type == "string" {
			return r
		}
	}
	if len(s.Required) > 0 {
		return s.Required[0]
	}
	names := slices.Sorted(maps.Keys(s.Properties))
	for _, n := range names {
		if s.Properties[n].Type == "string" {
			return n
		}
	}
	if len(names) > 0 {
		return names[0]
	}
	return ""
}

// readTools reads an OpenAI request's tools (names and the argument each
// fills), lays them before the messages as a chat template would, and
// reads tool_choice.
func (d *decoded) readTools(tools, choice json.RawMessage) error {
	if !isNull(tools) {
		d.Gen.ToolArgs = map[string]string{}
	}
	var err error
	if d.Gen.Tools, err = toolsOf(tools, d.Gen.ToolArgs); err != nil {
		return err
	}
	d.toolsFirst = withTools(&d.Gen, tools)
	d.Gen.ToolChoice, err = toolChoiceOf(choice)
	return err
}
