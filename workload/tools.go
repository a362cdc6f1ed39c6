package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/kneebench/knee/workload/wire"
)

// Tool is a function a request offers the model to call, as OpenAI's
// tools list declares one: its name, what it does, and its parameters'
// JSON schema.
type Tool = wire.Tool

// ToolCall is a call the model made: the server's id for it, the
// function's name and its arguments (JSON text).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// BuiltinTools is a small set of everyday functions, of the kinds BFCL's
// simple category asks for, for --tools builtin.
func BuiltinTools() []Tool {
	return []Tool{
		{Name: "get_weather", Description: "Get the current weather in a city.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"The city, e.g. Paris"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}`)},
		{Name: "search_web", Description: "Search the web and return the top results.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","minimum":1,"maximum":10}},"required":["query"]}`)},
		{Name: "calculate", Description: "Evaluate an arithmetic expression.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string","description":"e.g. 2 * (3 + 4)"}},"required":["expression"]}`)},
		{Name: "get_stock_price", Description: "Get the latest price of a stock by its ticker.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"ticker":{"type":"string"}},"required":["ticker"]}`)},
	}
}

// MaxTools bounds one request's tools: past it a file is not a tool list.
const MaxTools = 512

var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ParseTools reads a tools file: a JSON array (or an object with a
// "tools" array) of OpenAI tools ({"type": "function", "function":
// {...}}) or of bare functions ({"name", "description", "parameters"}),
// as BFCL writes them. BFCL's "dict" type is made JSON schema's
// "object". Every error says which entry is at fault.
func ParseTools(data []byte) ([]Tool, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var wrap struct {
			Tools json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(data, &wrap); err != nil || wrap.Tools == nil {
			return nil, errors.New(`a tools file is a JSON array of tools, or an object with a "tools" array`)
		}
		data = wrap.Tools
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("a tools file is a JSON array of tools: %v", err)
	}
	return toolsOf(raw)
}

// toolsOf reads each entry of a tools list.
func toolsOf(raw []json.RawMessage) ([]Tool, error) {
	if len(raw) == 0 {
		return nil, errors.New("the tools list is empty")
	}
	if len(raw) > MaxTools {
		return nil, fmt.Errorf("%d tools; at most %d", len(raw), MaxTools)
	}
	out := make([]Tool, 0, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		var t struct {
			Type     string          `json:"type"`
			Function *Tool           `json:"function"`
			Name     string          `json:"name"`
			Desc     string          `json:"description"`
			Params   json.RawMessage `json:"parameters"`
		}
		if err := json.Unmarshal(r, &t); err != nil {
			return nil, fmt.Errorf("tool %d is not an object with a name: %v", i+1, err)
		}
		tool := Tool{Name: t.Name, Description: t.Desc, Parameters: t.Params}
		if t.Function != nil {
			tool = *t.Function
		}
		if t.Type != "" && t.Type != "function" {
			return nil, fmt.Errorf("tool %d is of type %q: only functions are sent", i+1, t.Type)
		}
		if !toolName.MatchString(tool.Name) {
			return nil, fmt.Errorf("tool %d: name %q must be 1 to 64 letters, digits, _ . or -", i+1, tool.Name)
		}
		if seen[tool.Name] {
			return nil, fmt.Errorf("tool %d: %q is named twice", i+1, tool.Name)
		}
		seen[tool.Name] = true
		if len(tool.Parameters) > 0 && string(tool.Parameters) != "null" {
			p, err := schemaOf(tool.Parameters)
			if err != nil {
				return nil, fmt.Errorf("tool %d (%s): parameters: %v", i+1, tool.Name, err)
			}
			tool.Parameters = p
		} else {
			tool.Parameters = nil
		}
		out = append(out, tool)
	}
	return out, nil
}

// schemaOf checks that a parameters schema is a JSON object and writes
// BFCL's Python type names ("dict", "float", "tuple", "any") as JSON
// schema's, as BFCL itself does before calling an OpenAI-style API.
func schemaOf(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("must be a JSON schema object")
	}
	fixTypes(v, 0)
	return json.Marshal(v)
}

var pythonTypes = map[string]string{"dict": "object", "float": "number", "tuple": "array", "list": "array", "int": "integer", "bool": "boolean", "str": "string"}

func fixTypes(v any, depth int) {
	if depth > 64 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "type" {
				if js, ok := pythonTypes[s]; ok {
					x[k] = js
				} else if s == "any" {
					delete(x, k)
				}
				continue
			}
			fixTypes(e, depth+1)
		}
	case []any:
		for _, e := range x {
			fixTypes(e, depth+1)
		}
	}
}

// ToolChoices are the tool_choice values besides a function's name.
var ToolChoices = wire.ToolChoices
