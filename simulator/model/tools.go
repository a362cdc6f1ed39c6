package model

import (
	"errors"
	"hash/fnv"
	"slices"
	"strconv"
)

// ToolSpec makes a model call the tools a request offers, as a model
// served with vLLM's --enable-auto-tool-choice does: with tool_choice
// required or a function's name, every answer is a call; with auto,
// Share of them (chosen by the prompt, so the same prompt always
// decides alike); never with none, nor right after a tool's result (the
// model then answers in words). A call's arguments are ArgumentTokens
// tokens of JSON, streamed as delta.tool_calls pieces (chat) or
// function_call_arguments deltas (Responses), the answer ending with
// finish_reason "tool_calls".
type ToolSpec struct {
	Share          float64 `yaml:"share"`
	ArgumentTokens int     `yaml:"argument_tokens"`
}

// Validate checks the spec.
func (t *ToolSpec) Validate() error {
	if !(t.Share >= 0 && t.Share <= 1) {
		return errors.New("tools.share must be between 0 and 1")
	}
	if t.ArgumentTokens < 3 || t.ArgumentTokens > 100_000 {
		return errors.New("tools.argument_tokens must be between 3 and 100000")
	}
	return nil
}

// CallTool makes plan a call of one of gen's tools when spec says the
// model calls one: its tokens become the call's arguments, cut at
// max_tokens (finish_reason "length") or ended with "tool_calls". Think
// goes after it, the thought before the call.
func CallTool(plan *Plan, spec *ToolSpec, gen *GenRequest, contextLength int) {
	if spec == nil || len(gen.Tools) == 0 || gen.ToolChoice == "none" || plan.ToolName != "" {
		// (A scripted call was decided by the responses file.)
		return
	}
	if n := len(gen.Messages); n > 0 && gen.Messages[n-1].Role == "tool" {
		return
	}
	h := fnv.New64a()
	for _, m := range gen.Messages {
		h.Write([]byte(m.Text))
	}
	digest := h.Sum64()
	name := gen.ToolChoice
	switch name {
	case "", "auto":
		if float64(digest%10_000) >= spec.Share*10_000 {
			return
		}
		name = gen.Tools[digest%uint64(len(gen.Tools))]
	case "required":
		name = gen.Tools[digest%uint64(len(gen.Tools))]
	}
	limit := contextLength - plan.PromptTokens
	if gen.MaxTokens != nil {
		limit = min(limit, *gen.MaxTokens)
	}
	args := argumentTokens(spec.ArgumentTokens, gen.ToolArgs[name])
	plan.FinishReason = "tool_calls"
	if len(args) > limit {
		args, plan.FinishReason = args[:max(limit, 0)], "length"
	}
	plan.Tokens, plan.ToolName = args, name
}

// argumentTokens is n tokens of a call's JSON arguments, the tool's
// argument key (query when its schema names none) holding words: {"city":
// "words… "}.
func argumentTokens(n int, key string) []string {
	if key == "" {
		key = "query"
	}
	out := make([]string, 0, n)
	out = append(out, `{`+strconv.Quote(key)+`: "`)
	for i := 0; i < n-2; i++ {
		out = append(out, thinkWords[(i+3)%len(thinkWords)])
	}
	return append(out, `"}`)
}

// ToolNamed reports whether a named tool_choice names one of tools.
func ToolNamed(choice string, tools []string) bool {
	switch choice {
	case "", "auto", "none", "required":
		return true
	}
	return slices.Contains(tools, choice)
}
