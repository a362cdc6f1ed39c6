package model

import (
	"errors"
	"fmt"
	"hash/fnv"
)

// ReasoningSpec makes a model think before it answers, as gpt-oss, Qwen3
// and DeepSeek-R1 do behind vLLM's reasoning parsers: the first Tokens
// tokens of each chat answer (at most max_tokens, every one of them when
// max_tokens is smaller: the answer then never comes) stream in the delta
// field Field, reasoning_content (vLLM's older parsers, SGLang) or
// reasoning (vLLM's newer ones), the rest in content. Thinking tokens cost
// decode time like any other and count in the metrics' generation
// tokens; ReportTokens adds usage.completion_tokens_details.
// reasoning_tokens, which many server versions leave out.
//
// Efforts, when set, gives the thinking tokens a request's
// reasoning_effort asks for (low, medium, high; Tokens when it asks for
// none), and chat_template_kwargs {enable_thinking: false} turns thinking
// off, as Qwen3's template does.
type ReasoningSpec struct {
	Tokens       int            `yaml:"tokens"`
	Efforts      map[string]int `yaml:"efforts,omitempty"`
	Field        string         `yaml:"field,omitempty"`
	ReportTokens bool           `yaml:"report_tokens,omitempty"`
	// Spread, when set, draws each answer's thinking from Tokens ±
	// Spread (uniform; the same for the same answer), as real thought
	// varies from question to question.
	Spread int `yaml:"spread,omitempty"`
}

// ForRequest is the spec as a request's reasoning_effort and its
// chat_template_kwargs' enable_thinking=false (noThinking) shape it.
func (r *ReasoningSpec) ForRequest(effort string, noThinking bool) *ReasoningSpec {
	if r == nil {
		return nil
	}
	out := *r
	if n, ok := r.Efforts[effort]; ok {
		out.Tokens = n
	}
	if noThinking {
		out.Tokens = 0
	}
	return &out
}

// Validate checks the spec.
func (r *ReasoningSpec) Validate() error {
	if r.Tokens < 0 || r.Tokens > 1_000_000 {
		return errors.New("reasoning.tokens must be between 0 and 1000000")
	}
	if r.Spread < 0 || r.Spread > 1_000_000 {
		return errors.New("reasoning.spread must be between 0 and 1000000")
	}
	for e, n := range r.Efforts {
		if e != "low" && e != "medium" && e != "high" {
			return fmt.Errorf("reasoning.efforts: %q is no effort (low, medium, high)", e)
		}
		if n < 0 || n > 1_000_000 {
			return fmt.Errorf("reasoning.efforts.%s must be between 0 and 1000000", e)
		}
	}
	switch r.Field {
	case "", "reasoning_content", "reasoning":
		return nil
	}
	return errors.New(`reasoning.field must be "reasoning_content" or "reasoning"`)
}

// StreamField is the delta field thinking streams in.
func (r *ReasoningSpec) StreamField() string {
	if r.Field == "" {
		return "reasoning_content"
	}
	return r.Field
}

// Scripted is the spec a plan's scripted thought (the responses file's
// think) streams under: the model's own (its field, whether it reports
// the count) sized to the thought, or the defaults for a model that
// does not otherwise reason; none when the request turned thinking off.
func Scripted(plan *Plan, spec *ReasoningSpec, noThinking bool) *ReasoningSpec {
	if len(plan.Thought) == 0 || noThinking {
		return spec
	}
	var out ReasoningSpec
	if spec != nil {
		out = *spec
	}
	out.Tokens, out.Spread = len(plan.Thought), 0
	return &out
}

// thinkWords are what a simulated model thinks: one token each.
var thinkWords = []string{"Let", " me", " think", " about", " this", ".", " First", ",", " the", " question", " asks", " what", " follows", ";", " so"}

// Think puts the model's thought before its answer in plan: spec.Tokens
// tokens, then the answer, cut at max_tokens (or the context) with
// finish_reason "length", as a real model's answer is when thinking
// spends the budget.
func Think(plan *Plan, spec *ReasoningSpec, maxTokens *int, contextLength int) {
	if spec == nil || spec.Tokens == 0 {
		return
	}
	limit := contextLength - plan.PromptTokens
	if maxTokens != nil {
		limit = min(limit, *maxTokens)
	}
	n := min(thoughtFor(plan, spec), max(limit, 0))
	tokens := make([]string, 0, n+len(plan.Tokens))
	for i := range n {
		if len(plan.Thought) > 0 {
			tokens = append(tokens, plan.Thought[i%len(plan.Thought)])
			continue
		}
		tokens = append(tokens, thinkWords[i%len(thinkWords)])
	}
	tokens = append(tokens, plan.Tokens...)
	if len(tokens) > limit {
		tokens, plan.FinishReason = tokens[:max(limit, 0)], "length"
	}
	plan.Tokens, plan.ThoughtTokens = tokens, n
}

// thoughtFor is how many tokens the answer of plan thinks: spec.Tokens,
// or with a Spread a draw from Tokens ± Spread that the answer's own
// words decide (so the same prompt always thinks alike).
func thoughtFor(plan *Plan, spec *ReasoningSpec) int {
	if spec.Spread == 0 {
		return spec.Tokens
	}
	h := fnv.New64a()
	for _, t := range plan.Tokens {
		h.Write([]byte(t))
	}
	fmt.Fprint(h, plan.PromptTokens)
	return max(spec.Tokens+int(h.Sum64()%uint64(2*spec.Spread+1))-spec.Spread, 0)
}
