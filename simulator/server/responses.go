package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// responsesRequest is the body of a POST /v1/responses: OpenAI's Responses
// API as vLLM serves it. Fields knee does not act on are accepted and
// ignored, as in chat.
type responsesRequest struct {
	Model              *string                    `json:"model"`
	Input              json.RawMessage            `json:"input"`
	Instructions       *string                    `json:"instructions"`
	MaxOutputTokens    *int                       `json:"max_output_tokens"`
	PreviousResponseID *string                    `json:"previous_response_id"`
	Store              *bool                      `json:"store"`
	Stream             *bool                      `json:"stream"`
	IgnoreEOS          *bool                      `json:"ignore_eos"`
	Seed               *int64                     `json:"seed"`
	ChatTemplateKwargs map[string]json.RawMessage `json:"chat_template_kwargs"`
	Reasoning          *struct {
		Effort *string `json:"effort"`
	} `json:"reasoning"`
	Temperature *float64        `json:"temperature"`
	TopP        *float64        `json:"top_p"`
	ToolChoice  json.RawMessage `json:"tool_choice"`
	Tools       json.RawMessage `json:"tools"`
}

// decodeResponses parses and validates a Responses request: input as a
// string or a list of {role, content} message items (content a string or
// input_text parts), instructions as a system message first. Every error
// names its field.
func decodeResponses(body []byte) (*decoded, error) {
	var r responsesRequest
	if err := decodeObject(body, &r); err != nil {
		return nil, err
	}
	chk := apiRequest{Temperature: r.Temperature, TopP: r.TopP, ToolChoice: r.ToolChoice}
	if err := chk.checkSampling(true); err != nil {
		return nil, err
	}
	if err := chk.checkConstraints(); err != nil {
		return nil, err
	}
	if r.Model == nil || *r.Model == "" {
		return nil, badRequest("model", "you must provide a model parameter")
	}
	d := &decoded{Model: *r.Model, store: r.Store == nil || *r.Store, IncludeUsage: true}
	d.Gen = GenRequest{Chat: true, Model: d.Model, Seed: r.Seed, IgnoreEOS: r.IgnoreEOS != nil && *r.IgnoreEOS}
	if r.Instructions != nil && *r.Instructions != "" {
		d.Gen.Messages = append(d.Gen.Messages, Message{Role: "system", Text: *r.Instructions})
	}
	items, err := decodeInput(r.Input, &d.images)
	if err != nil {
		return nil, err
	}
	d.Gen.Messages = append(d.Gen.Messages, items...)
	if mt := r.MaxOutputTokens; mt != nil {
		if *mt < 1 {
			return nil, badRequest("max_output_tokens", "max_output_tokens must be at least 1, got %d", *mt)
		}
		d.Gen.MaxTokens = mt
	}
	if p := r.PreviousResponseID; p != nil && *p != "" {
		d.previous = *p
	}
	d.Stream = r.Stream != nil && *r.Stream
	if r.Reasoning != nil && r.Reasoning.Effort != nil {
		switch e := *r.Reasoning.Effort; e {
		case "low", "medium", "high":
			d.effort = e
		default:
			return nil, badRequest("reasoning.effort", "reasoning.effort must be low, medium or high, got %q", e)
		}
	}
	if v, ok := r.ChatTemplateKwargs["enable_thinking"]; ok && string(bytes.TrimSpace(v)) == "false" {
		d.noThinking = true
	}
	if err := d.readTools(r.Tools, r.ToolChoice); err != nil {
		return nil, err
	}
	return d, nil
}

// decodeInput reads input: a string (one user message) or a list of
// message items, their input_image parts collected in imgs.
func decodeInput(raw json.RawMessage, imgs *Images) ([]Message, error) {
	if isNull(raw) {
		return nil, badRequest("input", "'input' is a required property")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || s == "" {
			return nil, badRequest("input", "'input' must be a non-empty string or a list of items")
		}
		return []Message{{Role: "user", Text: s}}, nil
	}
	var items []struct {
		Type      *string         `json:"type"`
		Role      *string         `json:"role"`
		Content   json.RawMessage `json:"content"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Output    *string         `json:"output"`
		CallID    string          `json:"call_id"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest("input", "invalid 'input': expected a string or a list of {role, content} items")
	}
	if len(items) == 0 {
		return nil, badRequest("input", "'input' must not be empty")
	}
	out := make([]Message, len(items))
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		if it.Type != nil {
			switch *it.Type {
			case "message":
			case "function_call":
				// The template renders the call into the prompt.
				out[i] = Message{Role: "assistant", Text: it.Name + it.Arguments}
				continue
			case "function_call_output":
				if it.Output == nil || it.CallID == "" {
					return nil, badRequest(param+".output", "a function_call_output item needs call_id and output")
				}
				out[i] = Message{Role: "tool", Text: *it.Output}
				continue
			default:
				return nil, badRequest(param+".type", "input item type %q is not supported: the simulator takes message and function call items", *it.Type)
			}
		}
		if it.Role == nil {
			return nil, badRequest(param+".role", "missing 'role' in %s", param)
		}
		switch *it.Role {
		case "system", "user", "assistant", "developer":
		default:
			return nil, badRequest(param+".role", "invalid role %q in %s", *it.Role, param)
		}
		text, err := decodeItemContent(it.Content, param+".content", imgs)
		if err != nil {
			return nil, err
		}
		out[i] = Message{Role: *it.Role, Text: text}
	}
	return out, nil
}

// decodeItemContent accepts a string or a list of input_text (or
// output_text, for an earlier answer) parts, and input_image parts,
// collected in imgs (whether the model takes them is judged once it is
// known).
func decodeItemContent(raw json.RawMessage, param string, imgs *Images) (string, error) {
	if isNull(raw) {
		return "", badRequest(param, "missing '%s'", param)
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", badRequest(param, "invalid '%s': %v", param, err)
		}
		return s, nil
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     *string         `json:"text"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest(param, "invalid type for '%s': expected a string or a list of content parts", param)
	}
	var b strings.Builder
	for i, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, i)
		if p.Type == "input_image" {
			if isNull(p.ImageURL) {
				return "", badRequest(pp+".image_url", "missing 'image_url' in %s", pp)
			}
			imgs.Add(p.ImageURL, pp)
			continue
		}
		if p.Type != "input_text" && p.Type != "output_text" && p.Type != "text" {
			return "", badRequest(pp+".type", "content part type %q is not supported: this model accepts text only", p.Type)
		}
		if p.Text == nil {
			return "", badRequest(pp+".text", "missing 'text' in %s", pp)
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// storedResponses keeps the conversations of stored responses, for a
// later request to continue by previous_response_id. It holds at most
// maxStored, dropping the oldest: a long benchmark's server must not grow
// without bound (vLLM's store has no bound and is off unless asked for).
type storedResponses struct {
	mu    sync.Mutex
	convs map[string][]Message
	order []string
	next  int
}

const maxStored = 4096

func (s *storedResponses) put(id string, conv []Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.convs == nil {
		s.convs = map[string][]Message{}
	}
	if len(s.order) < maxStored {
		s.order = append(s.order, id)
	} else {
		delete(s.convs, s.order[s.next])
		s.order[s.next] = id
		s.next = (s.next + 1) % maxStored
	}
	s.convs[id] = conv
}

func (s *storedResponses) get(id string) ([]Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	return c, ok
}

// continueFrom puts the conversation d continues before its own
// messages: a 404 naming previous_response_id when it is not held, in
// vLLM's words (serving_responses.py _make_not_found_error).
func (s *Server) continueFrom(d *decoded) error {
	if d.previous == "" {
		return nil
	}
	conv, ok := s.stored.get(d.previous)
	if !ok {
		return &APIError{Status: 404, Type: "invalid_request_error", Param: "previous_response_id", Code: "previous_response_not_found",
			Message: fmt.Sprintf("Response with id '%.80s' not found.", d.previous)} // vLLM's words
	}
	msgs := d.Gen.Messages
	var head []Message
	if d.toolsFirst {
		head, msgs = msgs[:1], msgs[1:]
	}
	d.Gen.Messages = append(append(append([]Message(nil), head...), conv...), msgs...)
	return nil
}
