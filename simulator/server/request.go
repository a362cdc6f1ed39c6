package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// apiRequest is the body of a chat or completions request. Fields knee
// does not act on (temperature, top_p, ...) are accepted and ignored.
type apiRequest struct {
	Model               *string         `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Seed                *int64          `json:"seed"`
	Stream              *bool           `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage *bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS *bool           `json:"ignore_eos"`
	Stop      json.RawMessage `json:"stop"`
	// ReasoningEffort and chat_template_kwargs' enable_thinking shape a
	// reasoning model's thinking (ReasoningSpec).
	ReasoningEffort    *string                    `json:"reasoning_effort"`
	ChatTemplateKwargs map[string]json.RawMessage `json:"chat_template_kwargs"`
	N                  *int                       `json:"n"`
	// Sampling parameters are not acted on, but checked as OpenAI and
	// vLLM check them, so a client's mistake is caught here as it would
	// be there.
	Temperature      *float64        `json:"temperature"`
	TopP             *float64        `json:"top_p"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	TopLogprobs      *int            `json:"top_logprobs"`
	Logprobs         json.RawMessage `json:"logprobs"`
	// Constraints the simulator cannot honour are refused, not ignored:
	// a 200 would pass off free text as the constrained answer.
	ToolChoice     json.RawMessage `json:"tool_choice"`
	Tools          json.RawMessage `json:"tools"`
	ResponseFormat json.RawMessage `json:"response_format"`
	// Priority orders the request under the priority scheduling policy.
	Priority *int `json:"priority"`
}

// checkConstraints refuses what the simulator cannot do: hold its
// output to JSON (response_format json_object or json_schema). Tool
// choices are read apart (toolChoiceOf), and judged against the model
// (checkTools).
func (r *apiRequest) checkConstraints() error {
	if !isNull(r.ResponseFormat) {
		var f struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(r.ResponseFormat, &f) != nil || f.Type != "text" {
			return badRequest("response_format", "the simulator cannot hold its output to a format: response_format %s cannot be honoured (only {\"type\": \"text\"})", r.ResponseFormat)
		}
	}
	return nil
}

// checkSampling range-checks the sampling parameters (OpenAI's ranges;
// logprobs is a boolean on chat and a count of at most 5 on completions).
func (r *apiRequest) checkSampling(chat bool) error {
	between := func(param string, v *float64, lo, hi float64) error {
		if v != nil && (*v < lo || *v > hi) {
			return badRequest(param, "'%s' must be between %g and %g, got %g", param, lo, hi, *v)
		}
		return nil
	}
	for _, c := range []error{
		between("temperature", r.Temperature, 0, 2),
		between("top_p", r.TopP, 0, 1),
		between("presence_penalty", r.PresencePenalty, -2, 2),
		between("frequency_penalty", r.FrequencyPenalty, -2, 2),
	} {
		if c != nil {
			return c
		}
	}
	if r.TopLogprobs != nil && (*r.TopLogprobs < 0 || *r.TopLogprobs > 20) {
		return badRequest("top_logprobs", "'top_logprobs' must be between 0 and 20, got %d", *r.TopLogprobs)
	}
	if isNull(r.Logprobs) {
		return nil
	}
	if chat {
		var b bool
		if json.Unmarshal(r.Logprobs, &b) != nil {
			return badRequest("logprobs", "invalid type for 'logprobs': expected a boolean")
		}
		return nil
	}
	var n int
	if json.Unmarshal(r.Logprobs, &n) != nil || n < 0 || n > 5 {
		return badRequest("logprobs", "'logprobs' must be an integer between 0 and 5")
	}
	return nil
}

// decoded is a validated request.
type decoded struct {
	Model        string
	Gen          GenRequest
	Stream       bool
	IncludeUsage bool
	// effort is reasoning_effort; noThinking says chat_template_kwargs
	// set enable_thinking to false.
	effort     string
	noThinking bool
	// previous is the Responses API response a request continues, store
	// whether to keep it for a later one.
	previous string
	store    bool
	// toolsFirst says the first message is the request's tools
	// (withTools), not part of its conversation.
	toolsFirst bool
	// inputs are a pooled request's texts (a query's pairs with its
	// documents); query, docs and topN are a paired request's own.
	inputs []string
	query  string
	docs   []string
	topN   int
	// images are the request's images, for a vision model to count.
	images Images
	// priority is the request's "priority" (0 when not given).
	priority int
}

func badRequest(param, format string, a ...any) *APIError {
	return &APIError{Status: 400, Type: "invalid_request_error", Param: param, Message: fmt.Sprintf(format, a...)}
}

// decodeRequest parses and validates a request body. chat selects the chat
// schema (messages) over the completions one (prompt). Every error is an
// *APIError naming the offending field.
func decodeRequest(body []byte, chat bool) (*decoded, error) {
	if d := decodeCommon(body, chat); d != nil {
		return d, nil
	}
	return decodeRequestStrict(body, chat)
}

// decodeRequestStrict is the complete decoder: it handles every accepted shape
// and names the field at fault in every error.
func decodeRequestStrict(body []byte, chat bool) (*decoded, error) {
	r, err := parseAPIRequest(body, chat)
	if err != nil {
		return nil, err
	}
	d := &decoded{Gen: GenRequest{Chat: chat}}
	if r.Model == nil || *r.Model == "" {
		return nil, badRequest("model", "you must provide a model parameter")
	}
	d.Model = *r.Model
	d.Gen.Model = d.Model
	if chat {
		msgs, err := decodeMessages(r.Messages, &d.images)
		if err != nil {
			return nil, err
		}
		d.Gen.Messages = msgs
	} else {
		p, err := decodePrompt(r.Prompt)
		if err != nil {
			return nil, err
		}
		d.Gen.Prompt = p
	}
	if err := r.answerInto(d); err != nil {
		return nil, err
	}
	if err := r.thinkingInto(d); err != nil {
		return nil, err
	}
	if err := d.readTools(r.Tools, r.ToolChoice); err != nil {
		return nil, err
	}
	return d, nil
}

// parseAPIRequest reads the body as one JSON object, with vLLM's words
// for a wrong type, and checks its sampling and constraints.
func parseAPIRequest(body []byte, chat bool) (*apiRequest, error) {
	if !utf8.Valid(body) {
		return nil, badRequest("", "the request body is not valid UTF-8")
	}
	var r apiRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				return nil, badRequest("", "the request body must be a JSON object")
			}
			return nil, badRequest(field, "invalid type for '%s': expected %s", field, jsonKind(te.Type.Kind().String()))
		}
		return nil, badRequest("", "the request body is not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, badRequest("", "the request body has trailing data after the JSON object")
	}
	if err := r.checkSampling(chat); err != nil {
		return nil, err
	}
	if err := r.checkConstraints(); err != nil {
		return nil, err
	}
	return &r, nil
}

// answerInto reads how the answer is bounded and sent: max tokens, seed,
// n, streaming and usage, ignore_eos and priority.
func (r *apiRequest) answerInto(d *decoded) error {
	mt := r.MaxTokens
	if r.MaxCompletionTokens != nil {
		mt = r.MaxCompletionTokens
	}
	if mt != nil && *mt < 1 {
		return badRequest("max_tokens", "max_tokens must be at least 1, got %d", *mt)
	}
	d.Gen.MaxTokens = mt
	d.Gen.Seed = r.Seed
	if r.N != nil && *r.N != 1 {
		return badRequest("n", "only n=1 is supported, got %d", *r.N)
	}
	d.Stream = r.Stream != nil && *r.Stream
	if r.StreamOptions != nil && r.StreamOptions.IncludeUsage != nil {
		d.IncludeUsage = *r.StreamOptions.IncludeUsage
	}
	d.Gen.IgnoreEOS = r.IgnoreEOS != nil && *r.IgnoreEOS
	if r.Priority != nil {
		d.priority = *r.Priority
	}
	return nil
}

// thinkingInto reads what shapes a reasoning model's thinking, then the
// stop sequences.
func (r *apiRequest) thinkingInto(d *decoded) error {
	if r.ReasoningEffort != nil {
		switch e := *r.ReasoningEffort; e {
		case "low", "medium", "high":
			d.effort = e
		default:
			return badRequest("reasoning_effort", "reasoning_effort must be low, medium or high, got %q", e)
		}
	}
	if v, ok := r.ChatTemplateKwargs["enable_thinking"]; ok && string(bytes.TrimSpace(v)) == "false" {
		d.noThinking = true
	}
	stop, err := decodeStop(r.Stop)
	if err != nil {
		return err
	}
	d.Gen.Stop = stop
	return nil
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64":
		return "an integer"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "ptr", "struct":
		return "an object"
	}
	return "a " + k
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func decodeMessages(raw json.RawMessage, imgs *Images) ([]Message, error) {
	if isNull(raw) {
		return nil, badRequest("messages", "'messages' is a required property")
	}
	var items []struct {
		Role      *string         `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls json.RawMessage `json:"tool_calls"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest("messages", "invalid 'messages': expected an array of {role, content} objects")
	}
	if len(items) == 0 {
		return nil, badRequest("messages", "'messages' must not be empty")
	}
	out := make([]Message, len(items))
	for i, it := range items {
		param := fmt.Sprintf("messages[%d]", i)
		if it.Role == nil {
			return nil, badRequest(param+".role", "missing 'role' in %s", param)
		}
		switch *it.Role {
		case "system", "user", "assistant", "developer", "tool":
		default:
			return nil, badRequest(param+".role", "invalid role %q in %s", *it.Role, param)
		}
		text, err := decodeContent(it.Content, param+".content", *it.Role, imgs)
		if err != nil {
			return nil, err
		}
		if !isNull(it.ToolCalls) {
			// The template renders an assistant's calls into the prompt.
			text += string(it.ToolCalls)
		}
		out[i] = Message{Role: *it.Role, Text: text}
	}
	return out, nil
}

// decodeContent accepts a string or a list of text parts, and image_url
// parts, collected in imgs (whether the model takes them is judged once
// it is known).
func decodeContent(raw json.RawMessage, param, role string, imgs *Images) (string, error) {
	if isNull(raw) {
		if role == "assistant" || role == "tool" {
			return "", nil
		}
		return "", badRequest(param, "missing '%s'", param)
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", badRequest(param, "invalid '%s': %v", param, err)
		}
		return s, nil
	}
	var parts []struct {
		Type     *string         `json:"type"`
		Text     *string         `json:"text"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest(param, "invalid type for '%s': expected a string or an array of content parts", param)
	}
	var b strings.Builder
	for i, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, i)
		if p.Type == nil {
			return "", badRequest(pp+".type", "missing 'type' in %s", pp)
		}
		if *p.Type == "image_url" && imgs != nil {
			imgs.Add(p.ImageURL, pp)
			continue
		}
		if *p.Type != "text" {
			return "", badRequest(pp+".type", "content part type %q is not supported: this model accepts text only", *p.Type)
		}
		if p.Text == nil {
			return "", badRequest(pp+".text", "missing 'text' in %s", pp)
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// decodePrompt accepts a string or a list holding one string.
func decodePrompt(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", badRequest("prompt", "'prompt' is a required property")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			// vLLM refuses it too; an empty prompt has nothing to prefill.
			return "", badRequest("prompt", "the prompt must not be empty")
		}
		return s, nil
	}
	var l []string
	if err := json.Unmarshal(raw, &l); err != nil {
		return "", badRequest("prompt", "invalid type for 'prompt': expected a string or an array of strings")
	}
	if len(l) != 1 {
		return "", badRequest("prompt", "only a single prompt is supported, got %d", len(l))
	}
	if l[0] == "" {
		return "", badRequest("prompt", "the prompt must not be empty")
	}
	return l[0], nil
}

// decodeStop accepts a string or a list of up to 4 strings.
func decodeStop(raw json.RawMessage) ([]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []string{s}, nil
	}
	var l []string
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, badRequest("stop", "invalid type for 'stop': expected a string or an array of strings")
	}
	if len(l) > 4 {
		return nil, badRequest("stop", "at most 4 stop sequences are supported, got %d", len(l))
	}
	return l, nil
}
