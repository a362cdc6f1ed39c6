package results

import "github.com/kneebench/knee/workload/kind"

// A run's configuration: what was sent, to what, and how much.

// Config is the run's configuration as given, with secrets redacted.
type Config struct {
	BaseURL    string `json:"base_url"`
	BuiltinSim bool   `json:"builtin_simulator,omitempty"`
	Model      string `json:"model"`
	Endpoint   string `json:"endpoint"`
	// History is "server" when a call's later turns named the answer
	// before (previous_response_id) and sent only their new messages.
	History string `json:"history,omitempty"`
	// Tools is --tools (builtin, or the file's path) and ToolChoice
	// --tool-choice.
	Tools      string `json:"tools,omitempty"`
	ToolChoice string `json:"tool_choice,omitempty"`
	// ToolRounds and ToolResult are how a call's tool calls were
	// answered (--tool-rounds, --tool-result), when tools were offered.
	ToolRounds int               `json:"tool_rounds,omitempty"`
	ToolResult string            `json:"tool_result,omitempty"`
	APIKey     string            `json:"api_key,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	ExtraBody  string            `json:"extra_body,omitempty"`
	// IgnoreEOS says every request asked for its max_tokens whatever the
	// model's end-of-sequence token said.
	IgnoreEOS   bool     `json:"ignore_eos,omitempty"`
	Workload    Workload `json:"workload"`
	Mode        Mode     `json:"mode"`
	Concurrency int      `json:"concurrency,omitempty"`
	Rate        float64  `json:"rate,omitempty"`
	Burstiness  float64  `json:"burstiness,omitempty"`
	// RampUpS is --ramp-up: the seconds over which each level's rate
	// rose before its window, unmeasured; RampUpStrategy its shape
	// (linear or exponential) and RampUpFrom its start rate when one was
	// given (0: the strategy's default).
	RampUpS        float64 `json:"ramp_up_s,omitempty"`
	RampUpStrategy string  `json:"ramp_up_strategy,omitempty"`
	RampUpFrom     float64 `json:"ramp_up_from,omitempty"`
	MaxConcurrency int     `json:"max_concurrency,omitempty"`
	MaxTokens      int     `json:"max_tokens"`
	// Batch is a pooling request's inputs: an embeddings batch, or a
	// rerank's query and documents (0: one text).
	Batch int `json:"batch,omitempty"`
	// Images says what images each request sent (--image-*), when any.
	Images string `json:"images,omitempty"`
	// Mix says a mix's classes: each one's share, sizes, model,
	// priority and SLO.
	Mix         string `json:"mix,omitempty"`
	InputTokens int    `json:"input_tokens,omitempty"`
	// PrefixTokens and PrefixPool are the shared prefixes of synthetic
	// prompts: PrefixPool prefixes of PrefixTokens tokens, before each
	// request's InputTokens.
	PrefixTokens  int    `json:"prefix_tokens,omitempty"`
	PrefixPool    int    `json:"prefix_pool,omitempty"`
	Dataset       string `json:"dataset,omitempty"`
	DatasetFormat string `json:"dataset_format,omitempty"`
	// TraceSpeedup is how much faster than recorded a trace was replayed.
	TraceSpeedup float64 `json:"trace_speedup,omitempty"`
	// DatasetSizing is how a dataset level's requests were chosen and
	// counted, so a replay (knee calibrate) takes the same entries in the
	// same order, at the lengths the measured server counted.
	DatasetSizing *DatasetSizing `json:"dataset_sizing,omitempty"`
	// InputStddev, OutputStddev and RangeRatio are the length spread asked
	// of synthetic prompts (see workload.Spread).
	InputStddev  float64      `json:"input_tokens_stddev,omitempty"`
	OutputStddev float64      `json:"max_tokens_stddev,omitempty"`
	RangeRatio   float64      `json:"range_ratio,omitempty"`
	Requests     int          `json:"requests,omitempty"`
	DurationS    float64      `json:"duration_s,omitempty"`
	Warmup       int          `json:"warmup"`
	Seed         uint64       `json:"seed"`
	TimeoutS     float64      `json:"timeout_s"`
	Voice        *VoiceConfig `json:"voice,omitempty"`
	// Conversations holds the knobs of a conversation replay.
	Conversations *ConversationConfig `json:"conversations,omitempty"`
	// Predicted marks a run computed by knee predict in virtual time on
	// the simulator's scheduler core, not measured.
	Predicted bool `json:"predicted,omitempty"`
}

// Mode is how a run offered its load.
type Mode string

// The load modes.
const (
	// ModeOpen is an open loop: arrivals on a schedule, whether or not
	// earlier requests have finished.
	ModeOpen Mode = "open"
	// ModeClosed is a closed loop: a fixed number of workers, each
	// sending its next request when its last one ends.
	ModeClosed Mode = "closed"
)

// Workload names what a run sent.
type Workload string

// The workloads a result records.
const (
	WorkloadFixedPrompt   Workload = "fixed prompt"
	WorkloadSynthetic     Workload = "synthetic"
	WorkloadDataset       Workload = "dataset"
	WorkloadTrace         Workload = "trace"
	WorkloadVoice         Workload = "voice"
	WorkloadConversations Workload = "conversations"
	WorkloadMix           Workload = "mix"
)

// VoiceConfig holds the knobs of the multi-turn call workload.
type VoiceConfig struct {
	SystemPromptTokens int     `json:"system_prompt_tokens"`
	UserTokens         int     `json:"user_tokens"`
	Turns              int     `json:"turns"`
	GapMinS            float64 `json:"gap_min_s"`
	GapMaxS            float64 `json:"gap_max_s"`
	OutputTokens       int     `json:"output_tokens"`
	MaxConcurrentCalls int     `json:"max_concurrent_calls,omitempty"`
	Calls              int     `json:"calls,omitempty"`
}

// DatasetSizing says how a dataset's entries were counted (Counter
// "tokenizer", "chars" at CharsPerToken, or "words"), filtered, sampled
// (Kept entries, with the run's seed) and where the level started in them.
type DatasetSizing struct {
	Counter         string  `json:"counter"`
	Tokenizer       string  `json:"tokenizer,omitempty"`
	CharsPerToken   float64 `json:"chars_per_token,omitempty"`
	Kept            int     `json:"kept"`
	Offset          int     `json:"offset"`
	MinTokens       int     `json:"min_tokens,omitempty"`
	MaxPromptTokens int     `json:"max_prompt_tokens,omitempty"`
	MaxContext      int     `json:"max_context,omitempty"`
	BlockTokens     int     `json:"block_tokens,omitempty"`
}

// ConversationConfig holds the knobs of a dataset's conversations replayed
// as calls.
type ConversationConfig struct {
	GapMinS            float64 `json:"gap_min_s"`
	GapMaxS            float64 `json:"gap_max_s"`
	LiveHistory        bool    `json:"live_history,omitempty"`
	Calls              int     `json:"calls,omitempty"`
	MaxConcurrentCalls int     `json:"max_concurrent_calls,omitempty"`
}

// Kind is the kind of request the run sent (workload/kind).
func (c Config) Kind() kind.Kind { return kind.Name(c.Endpoint).Kind() }

// Pooled says the run drove a pooling endpoint (embeddings, rerank): one
// answer a request, no tokens streamed, E2E its latency.
func (c Config) Pooled() bool { return c.Kind().Pooled() }

// Latency is the figure a run's latency is read by over time and across
// levels: ttft_sched, or a pooling endpoint's e2e_sched (its answer is one
// body).
func (c Config) Latency() string {
	if c.Pooled() {
		return "e2e_sched"
	}
	return "ttft_sched"
}

// Tokens names the tokens a run's token throughput counts: "output", or a
// pooling endpoint's "prompt" (it generates none).
func (c Config) Tokens() string {
	if c.Pooled() {
		return "prompt"
	}
	return "output"
}

// TokensPerS is the run's token throughput as Config.Tokens names it.
func (r *Run) TokensPerS() float64 {
	if r.Config.Pooled() {
		return r.Throughput.TotalTokensPerS
	}
	return r.Throughput.OutputTokensPerS
}
