// Package kind is the table of request kinds: the APIs knee sends,
// serves and predicts (chat, completions, the Responses API, embeddings,
// rerank, …), each a value saying where it goes, what it carries and what
// comes back. The client's protocols (bench/transport), the simulator's
// handlers (simulator/server) and the predictor read it, and so do the
// help, the errors and the docs: a new kind is an entry here plus its
// own files on each side. It imports nothing of knee, so every room may.
package kind

import (
	"fmt"
	"strings"
)

// Name names a kind, as --endpoint and a result's config say it.
type Name string

// Input is the shape of what a request carries.
type Input int

const (
	// Messages is a conversation the server lays out with the model's
	// chat template: roles, images, tools, reasoning.
	Messages Input = iota
	// Text is one prompt, the messages' contents joined.
	Text
	// Batch is texts to embed, one or many a request.
	Batch
	// Pairs is a query scored against documents, each pair one input.
	Pairs
)

// Kind is one request kind.
type Kind struct {
	Name Name
	// Title is the API's own name, for messages ("the Responses API").
	Title string
	// Doc says in a few words what it is, for --endpoint's help.
	Doc string
	// Paths are where a server serves it, from the server's root; knee
	// sends to the first (ClientPath).
	Paths []string
	Input Input
	// Streamed says the answer is a stream of events (a generating
	// model's); otherwise it is one body (a pooling model's), and its
	// latency the whole answer's.
	Streamed bool
	// Budget is the body's field for the most tokens to generate.
	Budget string
	// History says the server can hold a conversation, a later turn
	// sending only its new messages (previous_response_id).
	History bool
	// Tools is how the API lays out tools and tool_choice.
	Tools ToolLayout
	// Effort is the body's field for a reasoning effort, a dotted path
	// when nested ("reasoning.effort"); "" when the API takes none.
	Effort string
	// Operation is OpenTelemetry's gen_ai.operation.name for it.
	Operation string
	// Unit names what a pooled request's inputs are ("inputs", "pairs").
	Unit string
	// Cached is where an answer says how many prompt tokens the server's
	// prefix cache held, for messages that name it; "" when it says none.
	Cached string
}

// ToolLayout is how an API lays out the tools a request offers and its
// tool_choice.
type ToolLayout struct {
	// Nested puts a tool's fields under "function" ({"type":"function",
	// "function":{…}}) rather than beside its type.
	Nested bool
	// Typed gives each tool "type":"function".
	Typed bool
	// Schema is the key of a tool's JSON schema ("parameters").
	Schema string
	// Required is tool_choice's word for "call one of them" ("required";
	// Anthropic's "any"), Named the type of a choice that names a tool
	// ("function"; Anthropic's "tool"), and Objects says every choice is an
	// object ({"type":"auto"}) rather than a bare word.
	Required, Named string
	Objects         bool
}

// OpenAI's layouts: Chat Completions nests a tool under "function", the
// Responses API lays it flat.
var (
	chatTools      = ToolLayout{Nested: true, Typed: true, Schema: "parameters", Required: "required", Named: "function"}
	responsesTools = ToolLayout{Typed: true, Schema: "parameters", Required: "required", Named: "function"}
	anthropicTools = ToolLayout{Schema: "input_schema", Required: "any", Named: "tool", Objects: true}
)

// Chat says the kind carries messages laid out by a chat template.
func (k Kind) Chat() bool { return k.Input == Messages }

// Pooled says the answer is one body, with no token generated.
func (k Kind) Pooled() bool { return !k.Streamed }

// Default is the kind of a request that names none.
const Default Name = "chat"

// table is every kind, in the order help lists them.
var table = []Kind{
	{Name: "chat", Title: "Chat Completions", Doc: "/v1/chat/completions", Paths: []string{"/v1/chat/completions"},
		Input: Messages, Streamed: true, Budget: "max_tokens", Effort: "reasoning_effort", Tools: chatTools, Operation: "chat",
		Cached: "usage.prompt_tokens_details.cached_tokens"},
	{Name: "completions", Title: "Completions", Doc: "/v1/completions", Paths: []string{"/v1/completions"},
		Input: Text, Streamed: true, Budget: "max_tokens", Operation: "text_completion", Cached: "usage.prompt_tokens_details.cached_tokens"},
	{Name: "generate", Title: "Generate", Doc: "SGLang's native /generate", Paths: []string{"/generate"},
		Input: Text, Streamed: true, Budget: "sampling_params.max_new_tokens", Operation: "text_completion",
		Cached: "meta_info.cached_tokens"},
	{Name: "responses", Title: "Responses", Doc: "OpenAI's /v1/responses", Paths: []string{"/v1/responses"},
		Input: Messages, Streamed: true, Budget: "max_output_tokens", History: true, Tools: responsesTools, Effort: "reasoning.effort", Operation: "chat",
		Cached: "usage.input_tokens_details.cached_tokens"},
	{Name: "messages", Title: "Messages", Doc: "Anthropic's /v1/messages", Paths: []string{"/v1/messages"},
		Input: Messages, Streamed: true, Budget: "max_tokens", Effort: "output_config.effort", Tools: anthropicTools, Operation: "chat",
		Cached: "usage.cache_read_input_tokens"},
	{Name: "embeddings", Title: "Embeddings", Doc: "/v1/embeddings, a pooling model", Paths: []string{"/v1/embeddings"},
		Input: Batch, Operation: "embeddings", Unit: "inputs"},
	{Name: "rerank", Title: "Rerank", Doc: "/v1/rerank, a pooling model", Paths: []string{"/v1/rerank", "/rerank", "/v2/rerank"},
		Input: Pairs, Operation: "rerank", Unit: "pairs"},
	{Name: "score", Title: "Score", Doc: "vLLM's /v1/score, a pooling model", Paths: []string{"/v1/score", "/score"},
		Input: Pairs, Operation: "score", Unit: "pairs"},
}

// Of is the kind named n ("" is Default), and whether there is one.
func Of(n Name) (Kind, bool) {
	if n == "" {
		n = Default
	}
	for _, k := range table {
		if k.Name == n {
			return k, true
		}
	}
	return Kind{}, false
}

// Kind is the kind n names; an unknown name is a kind of that name with
// nothing to say (check names with Of or Check first).
func (n Name) Kind() Kind {
	k, ok := Of(n)
	if !ok {
		return Kind{Name: n}
	}
	return k
}

// All lists every kind, in the order help lists them.
func All() []Kind { return append([]Kind(nil), table...) }

// Names lists every kind's name.
func Names() []Name {
	out := make([]Name, len(table))
	for i, k := range table {
		out[i] = k.Name
	}
	return out
}

// List is the kinds' names for help and errors: "chat, completions, …
// or score".
func List() string {
	names := make([]string, len(table))
	for i, k := range table {
		names[i] = string(k.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Help is one line per kind, "name: what it is", for --endpoint's help.
func Help() string {
	parts := make([]string, len(table))
	for i, k := range table {
		parts[i] = string(k.Name) + " (" + k.Doc + ")"
	}
	return strings.Join(parts, ", ")
}

// Check refuses a name that is no kind, listing the kinds.
func Check(n Name) error {
	if _, ok := Of(n); !ok {
		return fmt.Errorf("must be %s, got %q", List(), n)
	}
	return nil
}

// ClientPath is where knee sends k: under the API root it is given
// (…/v1) when k's first path is under /v1, else under the server's root
// (SGLang's /generate beside /v1); apiRoot is true for the former.
func (k Kind) ClientPath() (path string, apiRoot bool) {
	p := k.Paths[0]
	if rest, ok := strings.CutPrefix(p, "/v1/"); ok {
		return "/" + rest, true
	}
	return p, false
}

// ByPath is the kind a server serves at path (from its root).
func ByPath(path string) (Kind, bool) {
	for _, k := range table {
		for _, p := range k.Paths {
			if p == path {
				return k, true
			}
		}
	}
	return Kind{}, false
}

// Where is the names of the kinds that have a property, for messages:
// "chat or responses".
func Where(has func(Kind) bool) string {
	var names []string
	for _, k := range table {
		if has(k) {
			names = append(names, string(k.Name))
		}
	}
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
