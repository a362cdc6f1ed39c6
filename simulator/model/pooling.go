package model

import (
	"errors"

	"github.com/kneebench/knee/simulator/content"
)

// PoolingSpec makes a model a pooling model, as vLLM serves embedding
// models: it answers /v1/embeddings (and refuses to generate), each
// request's inputs prefilled with no decode, one vector of Dimension
// numbers per input, the same vector for the same text.
type PoolingSpec struct {
	Dimension int `yaml:"dimension"`
}

// Validate checks the spec.
func (p *PoolingSpec) Validate() error {
	if p.Dimension < 1 || p.Dimension > 65536 {
		return errors.New("pooling.dimension must be between 1 and 65536")
	}
	return nil
}

// PoolPlan is what the engine runs for a pooling request: its inputs'
// tokens prefilled as one sequence (vLLM schedules each input apart; as
// one, their prefill costs the same tokens), and one token out, the
// pooled result, with no decode after it.
func PoolPlan(inputs []string, wantIDs bool) *Plan {
	plan := &Plan{Tokens: []string{""}, FinishReason: "stop"}
	for _, in := range inputs {
		n, ids := content.PromptTokens(&content.GenRequest{Prompt: in, WantIDs: wantIDs})
		plan.PromptTokens += n
		plan.PromptIDs = append(plan.PromptIDs, ids...)
	}
	return plan
}
