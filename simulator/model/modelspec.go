package model

// The models file's types, as models.yml spells them.

// ModelsFile is the parsed form of a models.yml.
type ModelsFile struct {
	Hardware map[string]HardwareSpec `yaml:"hardware"`
	Models   []ModelSpec             `yaml:"models"`
}

// HardwareSpec is one GPU profile, defined once and referenced by name.
type HardwareSpec struct {
	HBMGiB              float64 `yaml:"hbm_gib"`
	MemoryBandwidthGBps float64 `yaml:"memory_bandwidth_gbps"`
	// PeakTFLOPS is dense bf16; PeakTFLOPSFP8 dense fp8 (0: none).
	PeakTFLOPS    float64 `yaml:"peak_tflops"`
	PeakTFLOPSFP8 float64 `yaml:"peak_tflops_fp8,omitempty"`
	// The tensor-parallel link: one GPU's bandwidth to its peers in one
	// direction, and the fixed cost of one small all-reduce.
	InterconnectGBps      float64 `yaml:"interconnect_gbps,omitempty"`
	InterconnectLatencyUs float64 `yaml:"interconnect_latency_us,omitempty"`
	// IdlePowerW and MaxPowerW, when given, are one GPU's idle draw and
	// power limit: knee sim's /gpu/metrics draws its power between them.
	IdlePowerW float64 `yaml:"idle_power_w,omitempty"`
	MaxPowerW  float64 `yaml:"max_power_w,omitempty"`
	// GEMM, when given, makes the matrix products' speed depend on the
	// step's tokens and each GPU's slice (GEMMSpec).
	GEMM *GEMMSpec `yaml:"gemm_tiles,omitempty"`
}

// EngineKind names how a model's tokens are timed.
type EngineKind string

// The engines a model can run.
const (
	// EngineInstant answers at once, every token in one write.
	EngineInstant EngineKind = "instant"
	// EngineFixedRate streams at a fixed rate after a fixed first-token time.
	EngineFixedRate EngineKind = "fixed_rate"
	// EngineScheduler runs the scheduler core: continuous batching on a
	// simulated GPU, paged KV, prefix caching, preemption.
	EngineScheduler EngineKind = "scheduler"
)

// FitSpec is how well a model's tuning fitted the measurements it was
// calibrated to (knee calibrate): the figures every prediction made from
// the model states beside its own.
type FitSpec struct {
	Measured string `yaml:"measured"`
	// TrainErrorPct and HeldOutErrorPct are mean absolute errors in
	// percent over the fitted and the held-out levels (HeldOutLevels 0:
	// none was held out).
	TrainLevels     int     `yaml:"train_levels"`
	TrainErrorPct   float64 `yaml:"train_error_pct"`
	HeldOutLevels   int     `yaml:"held_out_levels"`
	HeldOutErrorPct float64 `yaml:"held_out_error_pct"`
	// WorstErrorPct is the worst single figure's error of the fitted
	// levels.
	WorstErrorPct float64 `yaml:"worst_error_pct"`
	// StdErrs are the fitted parameters' standard errors, by name.
	StdErrs map[string]float64 `yaml:"std_errs,omitempty"`
	// Verdict is good or poor (a poor fit written all the same with
	// --accept-poor-fit), and Problems why.
	Verdict  string   `yaml:"verdict"`
	Problems []string `yaml:"problems,omitempty"`
}

// ModelSpec is one served model.
type ModelSpec struct {
	Name string `yaml:"name"`
	// Preset, when set, makes the model exactly the preset
	// GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]] (see knee presets) under this name;
	// no other field may be given with it.
	Preset        string          `yaml:"preset,omitempty"`
	ContextLength int             `yaml:"context_length"`
	Engine        EngineKind      `yaml:"engine"`
	FixedRate     *FixedRateSpec  `yaml:"fixed_rate,omitempty"`
	Hardware      string          `yaml:"hardware"`
	Weights       *WeightsSpec    `yaml:"weights,omitempty"`
	KVCache       *KVCacheSpec    `yaml:"kv_cache,omitempty"`
	Scheduler     *SchedulerSpec  `yaml:"scheduler,omitempty"`
	Latency       *LatencySpec    `yaml:"latency,omitempty"`
	Efficiency    *EfficiencySpec `yaml:"efficiency,omitempty"`
	// Fit, when set, is how well the tuning fitted a measurement.
	Fit            *FitSpec          `yaml:"fit,omitempty"`
	Architecture   *ArchitectureSpec `yaml:"architecture,omitempty"`
	Experts        *ExpertsSpec      `yaml:"experts,omitempty"`
	TensorParallel int               `yaml:"tensor_parallel,omitempty"`
	PrefixCaching  *bool             `yaml:"prefix_caching,omitempty"`
	Faults         *FaultSpec        `yaml:"faults,omitempty"`
	// Reasoning, when set, makes the model think before it answers.
	Reasoning *ReasoningSpec `yaml:"reasoning,omitempty"`
	// Tools, when set, makes the model call the tools requests offer.
	Tools *ToolSpec `yaml:"tools,omitempty"`
	// Pooling, when set, makes it a pooling model (embeddings).
	Pooling *PoolingSpec `yaml:"pooling,omitempty"`
	// Vision, when set, makes it take images.
	Vision *VisionSpec `yaml:"vision,omitempty"`
	// LoRA, when set, serves adapters of the model (LoRASpec).
	LoRA *LoRASpec `yaml:"lora,omitempty"`
	// SchedulingPolicy is fcfs (the default) or priority, as vLLM's
	// --scheduling-policy: a request's "priority" (lower first) then
	// orders the queue and picks what a preemption takes.
	SchedulingPolicy string `yaml:"scheduling_policy,omitempty"`
	// LongPrefillTokenThreshold caps the tokens one request computes in a
	// step, as vLLM's --long-prefill-token-threshold (0: off, vLLM's
	// default): a long prompt then leaves room in every step for the
	// short requests queued behind it.
	LongPrefillTokenThreshold int `yaml:"long_prefill_token_threshold,omitempty"`
	// SchedulesAs is whose scheduling rules a scheduler model follows:
	// vllm (the default: vLLM V1's) or sglang (SGLang's defaults: a step
	// prefills or decodes, never both; prompt chunks sized by the GPU's
	// memory; a running-request cap from the KV cache). See SGLangRules.
	SchedulesAs string `yaml:"schedules_as,omitempty"`
	// StreamInterval, above 1, sends a request's tokens in groups of
	// that many after the first, as vLLM's and SGLang's --stream-interval
	// do (one event a group, its tokens' text in one delta).
	StreamInterval int `yaml:"stream_interval,omitempty"`
	// NumSchedulerSteps, above 1, schedules as vLLM V0's
	// --num-scheduler-steps did (multistep.go); MultiStepStreamOutputs
	// false sends a window's tokens at its end, as its
	// --multi-step-stream-outputs false (true, the default: every step's).
	NumSchedulerSteps      int   `yaml:"num_scheduler_steps,omitempty"`
	MultiStepStreamOutputs *bool `yaml:"multi_step_stream_outputs,omitempty"`
	// ScheduleOverheadMs is the scheduler's own time, paid once per call:
	// every step, or once a num_scheduler_steps window, which is what
	// multi-step saves (sched.Tuning.ScheduleOverhead). 0 by default.
	ScheduleOverheadMs float64 `yaml:"schedule_overhead_ms,omitempty"`
	// MaxModelLen, when set, serves a shorter context than the model's,
	// as vLLM's --max-model-len: it replaces context_length.
	MaxModelLen int `yaml:"max_model_len,omitempty"`
	// StepTimeCV varies each step's time about the cost model's, a
	// log-normal of this coefficient of variation, seeded per replica
	// (0, the default: every step exactly the cost model's).
	StepTimeCV float64 `yaml:"step_time_cv,omitempty"`
	// Disaggregated, when set, serves the model with prefill and decode
	// on separate pools of replicas (DisaggSpec).
	Disaggregated *DisaggSpec `yaml:"disaggregated,omitempty"`
}

// The engines whose scheduling rules a scheduler model can follow.
const (
	SchedulesVLLM   = "vllm"
	SchedulesVLLMV0 = "vllm-v0"
	SchedulesSGLang = "sglang"
	SchedulesTRTLLM = "trtllm"
)

// FixedRateSpec configures the fixed_rate engine.
type FixedRateSpec struct {
	OverheadMs             float64 `yaml:"overhead_ms"`
	PrefillTokensPerSecond float64 `yaml:"prefill_tokens_per_second"`
	DecodeTokensPerSecond  float64 `yaml:"decode_tokens_per_second"`
}

// WeightsSpec sizes the model's weights.
// dtype (bf16, fp16, fp8, int8, int4) gives bytes_per_parameter when that is
// not set; fp8 weights also compute at the GPU's fp8 peak (W8A8).
type WeightsSpec struct {
	ParametersBillions float64 `yaml:"parameters_billions"`
	BytesPerParameter  float64 `yaml:"bytes_per_parameter,omitempty"`
	DType              string  `yaml:"dtype,omitempty"`
}

// ArchitectureSpec gives what the attention FLOPs and the tensor-parallel
// all-reduces need beyond the KV cache's layers and head_dim. vocab_size
// (and tied_embeddings, the config's tie_word_embeddings) charge the
// embedding and the LM head as engines run them: a lookup, and a product
// only for the positions sampled.
type ArchitectureSpec struct {
	HiddenSize     int  `yaml:"hidden_size"`
	AttentionHeads int  `yaml:"attention_heads"`
	VocabSize      int  `yaml:"vocab_size,omitempty"`
	TiedEmbeddings bool `yaml:"tied_embeddings,omitempty"`
}

// ExpertsSpec describes a mixture of experts: count routed experts per
// layer, per_token of them used by each token, and parameters_billions of
// the weights (all layers) held in them.
type ExpertsSpec struct {
	Count              int     `yaml:"count"`
	PerToken           int     `yaml:"per_token"`
	ParametersBillions float64 `yaml:"parameters_billions"`
}

// KVCacheSpec sizes the KV cache: either bytes_per_token, or the layer
// shape (layers × kv_heads × head_dim × bytes_per_element, for K and V).
// With sliding_window, only global_layers hold every token; the others hold
// at most sliding_window tokens.
// dtype (bf16, fp16, fp8) gives bytes_per_element when that is not set.
// reserve_gib is the memory per GPU kept for activations and CUDA graphs.
type KVCacheSpec struct {
	BytesPerToken        float64 `yaml:"bytes_per_token,omitempty"`
	Layers               int     `yaml:"layers,omitempty"`
	KVHeads              int     `yaml:"kv_heads,omitempty"`
	HeadDim              int     `yaml:"head_dim,omitempty"`
	BytesPerElement      float64 `yaml:"bytes_per_element,omitempty"`
	DType                string  `yaml:"dtype,omitempty"`
	SlidingWindow        int     `yaml:"sliding_window,omitempty"`
	GlobalLayers         int     `yaml:"global_layers,omitempty"`
	BlockSize            int     `yaml:"block_size,omitempty"`
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization,omitempty"`
	Watermark            float64 `yaml:"watermark,omitempty"`
	ReserveGiB           float64 `yaml:"reserve_gib,omitempty"`
}

// SchedulerSpec holds the batching limits.
type SchedulerSpec struct {
	MaxNumBatchedTokens int `yaml:"max_num_batched_tokens"`
	MaxNumSeqs          int `yaml:"max_num_seqs"`
}

// LatencySpec holds fixed costs.
type LatencySpec struct {
	StepOverheadMs        float64 `yaml:"step_overhead_ms"`
	PerSequenceOverheadMs float64 `yaml:"per_sequence_overhead_ms,omitempty"`
}

// EfficiencySpec scales peak compute and bandwidth.
type EfficiencySpec struct {
	Compute float64 `yaml:"compute"`
	Memory  float64 `yaml:"memory"`
}
