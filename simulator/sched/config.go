package sched

import (
	"fmt"
	"math"
)

// MaxBlocks is the most blocks a KV cache may hold: a block is known by
// an int32 (and the prefix table stores it plus one).
const MaxBlocks = math.MaxInt32 - 1

// Config is everything the policy needs.
type Config struct {
	NumBlocks           int
	BlockSize           int
	MaxNumBatchedTokens int
	MaxNumSeqs          int
	// LongPrefillThreshold, when above 0, caps the tokens one request
	// computes in a step (vLLM's --long-prefill-token-threshold): a long
	// prompt's chunks leave the rest of the step's budget to others, so a
	// short request arriving behind it waits a chunk, not the whole
	// prompt. 0 (vLLM's default) lets a prefill take the whole budget.
	LongPrefillThreshold int
	// Watermark is the fraction of blocks kept free when admitting waiting
	// requests: 0 as in vLLM V1 (the default), 0.01 for the older V0
	// behaviour.
	Watermark     float64
	PrefixCaching bool
	Costs         Costs
	// Policy orders the waiting queue: PolicyFCFS (the default),
	// PolicyPriority (vLLM's --scheduling-policy priority) or PolicyLPM
	// (SGLang's --schedule-policy lpm).
	Policy string
	// PrefillFirst schedules as SGLang does by default (its mixed chunk
	// off): a step either computes prompts or decodes, never both, and
	// computes prompts whenever some are pending, so the running requests'
	// decodes wait out every prefill step. Off, as vLLM V1, a step
	// spends its budget on decodes first and prompt chunks with the rest.
	PrefillFirst bool
	// LoRA, when set, serves adapters (Request.Adapter above 0).
	LoRA *LoRA
	// StreamInterval, above 1, releases a request's tokens in groups of
	// that many after the first (Released): when a client sees them, not
	// when the core computes them.
	StreamInterval int
	// SchedulerSteps, above 1, schedules as vLLM V0's multi-step did
	// (--num-scheduler-steps): a decode window of that many steps on a
	// batch fixed at its start (multistep.go). It needs WholePrompts and
	// PrefillFirst, the V0 rules it ran under.
	SchedulerSteps int
	// WindowOutputs sends a window's tokens at its end, as V0's
	// multi_step_stream_outputs false did: a sequence's tokens of the
	// window in one group, its last at once.
	WindowOutputs bool
	// StepTimeCV, above 0, varies each step's duration about the cost
	// model's with this coefficient of variation (see jitter.go).
	StepTimeCV float64
	// WholePrompts computes a prompt in one step or not at all, as vLLM
	// V0 without chunked prefill and TensorRT-LLM without chunked context
	// do: a prompt that does not fit the step's budget left stops the
	// admissions, and one longer than the budget never fits (Fits).
	WholePrompts bool
	// ReserveOutput admits a request only when the KV cache holds its
	// prompt and its whole answer beside what the running requests have
	// reserved, so a running request never needs a block that is not
	// there and none is preempted (TensorRT-LLM's GUARANTEED_NO_EVICT).
	ReserveOutput bool
	// ReserveDecodes keeps KV room for the running requests' answers when
	// prompts are added, as SGLang's scheduler does (sglang_reserve.go): a
	// chunk that would eat into it waits, and the step decodes instead.
	ReserveDecodes bool
	// Rules names whose scheduling rules these are, for what a
	// prediction says of them ("" for vLLM V1's).
	Rules string
}

// Scheduling policies.
const (
	// PolicyFCFS admits in arrival order, a preempted request first, and
	// preempts the newest running request.
	PolicyFCFS = "fcfs"
	// PolicyPriority admits by (priority, arrival), the lowest value
	// first, and preempts the running request of the highest (priority,
	// arrival): vLLM's max(running, key=(priority, arrival_time)).
	PolicyPriority = "priority"
)

// Validate reports a configuration that cannot run.
func (c Config) Validate() error {
	switch {
	case c.NumBlocks < 1:
		return fmt.Errorf("the KV cache holds no block: the memory the weights and the reserve leave is less than one block")
	case c.NumBlocks > MaxBlocks:
		return fmt.Errorf("the KV cache would hold %d blocks of %d tokens, more than the %d knee models: "+
			"check the KV bytes per token, or give a larger block_size", c.NumBlocks, c.BlockSize, MaxBlocks)
	case c.BlockSize < 1:
		return fmt.Errorf("block size must be positive")
	case c.StreamInterval < 0 || c.StreamInterval > 1<<16:
		return fmt.Errorf("stream_interval %d: 0 or 1 (every token) up to 65536", c.StreamInterval)
	case c.SchedulerSteps < 0 || c.SchedulerSteps > 1024:
		return fmt.Errorf("num_scheduler_steps %d: 1 (every step scheduled) up to 1024", c.SchedulerSteps)
	case c.SchedulerSteps > 1 && !(c.WholePrompts && c.PrefillFirst):
		return fmt.Errorf("num_scheduler_steps %d: vLLM V0's multi-step, modelled as V0 ran it without chunked prefill (prompts whole, in steps of their own)", c.SchedulerSteps)
	case !(c.StepTimeCV >= 0 && c.StepTimeCV <= 1):
		return fmt.Errorf("step_time_cv %v: from 0 (none) to 1", c.StepTimeCV)
	case c.LongPrefillThreshold < 0:
		return fmt.Errorf("long_prefill_token_threshold %d: 0 (off) or more", c.LongPrefillThreshold)
	case c.MaxNumBatchedTokens < 1 || c.MaxNumSeqs < 1:
		return fmt.Errorf("max_num_batched_tokens and max_num_seqs must be positive")
	case c.Watermark < 0 || c.Watermark >= 1:
		return fmt.Errorf("watermark must be in [0, 1)")
	case c.Policy != "" && c.Policy != PolicyFCFS && c.Policy != PolicyPriority && c.Policy != PolicyLPM:
		return fmt.Errorf("scheduling policy %q: fcfs, priority or lpm", c.Policy)
	}
	if c.LoRA != nil {
		return c.LoRA.validate()
	}
	return nil
}

// LongestFit is the longest sequence the cache holds alone, in tokens, up
// to limit: what vLLM checks against max_model_len before it starts (it
// refuses a context one request of which its cache cannot hold).
func (c Config) LongestFit(limit int) int {
	fits := func(n int) bool { return c.BlocksFor(n) <= c.NumBlocks }
	if c.BlockSize < 1 || limit < 1 || !fits(1) {
		return 0
	}
	lo, hi := 1, limit
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// BlocksFor is the pool blocks a sequence of n tokens takes, its
// sliding-window layers' included.
func (c Config) BlocksFor(n int) int {
	bs := c.BlockSize
	return (n+bs-1)/bs + c.Costs.windowBlocks(n, bs)
}
