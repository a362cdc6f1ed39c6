package telemetry

import (
	"github.com/kneebench/knee/simulator/sched"
	"github.com/prometheus/client_golang/prometheus"
	"strconv"
)

// vLLM's own bucket boundaries (vllm/v1/metrics/loggers.py, buckets.py),
// so dashboards built for vLLM read the simulator unchanged.
var (
	bucketsTTFT = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	bucketsITL  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	bucketsReq  = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	bucketsIter = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	bucketsPre  = []float64{1, 2, 3, 4, 5, 10, 20}
	bucketsLag  = []float64{0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	bucketsStep = []float64{0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56}
)

// tokenBuckets is vLLM's 1-2-5 series up to a model's context length.
func tokenBuckets(maxLen int) []float64 {
	var out []float64
	for mag := 1; ; mag *= 10 {
		for _, m := range []int{1, 2, 5} {
			v := m * mag
			if v > maxLen {
				return out
			}
			out = append(out, float64(v))
		}
	}
}

var finishReasons = []string{"stop", "length", "abort", "error"}

// Metrics holds the Prometheus collectors of every model.
type Metrics struct {
	// Reg holds every collector; /metrics gathers it.
	Reg *prometheus.Registry

	ttft, itl, tpot, e2e, queue, inference, prefill, decode *prometheus.HistogramVec
	promptTok, genTok, maxTokens, kvComputed, numPreempt    *prometheus.HistogramVec
	iterTokens                                              *prometheus.HistogramVec
	lag, stepDuration, stepBatch                            *prometheus.HistogramVec
	promptTotal, genTotal, success                          *prometheus.CounterVec
	preemptions, prefixQueries, prefixHits                  *prometheus.CounterVec
	steps, admissionStops, faults                           *prometheus.CounterVec
	running, waiting, kvUsage                               *prometheus.GaugeVec
	// CacheConfig is vLLM's cache_config_info, set once per model.
	CacheConfig *prometheus.GaugeVec
	// LoRAInfo is vllm:lora_requests_info (SetLoRA).
	LoRAInfo *prometheus.GaugeVec
}

// NewMetrics registers every collector, token-count buckets reaching
// maxContext.
func NewMetrics(maxContext int) *Metrics {
	labels := []string{"model_name", "engine"}
	m := &Metrics{Reg: prometheus.NewRegistry()}
	h := func(name, help string, b []float64, extra ...string) *prometheus.HistogramVec {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: b}, append(labels, extra...))
		m.Reg.MustRegister(v)
		return v
	}
	c := func(name, help string, extra ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append(labels, extra...))
		m.Reg.MustRegister(v)
		return v
	}
	g := func(name, help string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		m.Reg.MustRegister(v)
		return v
	}
	tok := tokenBuckets(maxContext)
	m.ttft = h("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", bucketsTTFT)
	m.itl = h("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", bucketsITL)
	m.tpot = h("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", bucketsITL)
	m.e2e = h("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", bucketsReq)
	m.queue = h("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", bucketsReq)
	m.inference = h("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", bucketsReq)
	m.prefill = h("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", bucketsReq)
	m.decode = h("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", bucketsReq)
	m.promptTok = h("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tok)
	m.genTok = h("vllm:request_generation_tokens", "Number of generation tokens processed.", tok)
	m.maxTokens = h("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", tok)
	m.kvComputed = h("vllm:request_prefill_kv_computed_tokens", "Histogram of new KV tokens computed during prefill (excluding cached tokens).", tok)
	m.numPreempt = h("vllm:request_num_preemptions", "Histogram of the number of preemptions per request.", bucketsPre)
	m.iterTokens = h("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", bucketsIter)
	m.lag = h("knee_sim_token_lag_seconds", "How late each token was released against its simulated deadline.", bucketsLag)
	m.stepDuration = h("knee_sim_step_duration_seconds", "Simulated duration of each scheduler step.", bucketsStep)
	m.stepBatch = h("knee_sim_step_batch_size", "Sequences scheduled in each scheduler step.", bucketsIter)
	m.promptTotal = c("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	m.genTotal = c("vllm:generation_tokens_total", "Number of generation tokens processed.")
	m.success = c("vllm:request_success_total", "Count of successfully processed requests.", "finished_reason")
	m.preemptions = c("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.")
	m.prefixQueries = c("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.")
	m.prefixHits = c("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.")
	m.steps = c("knee_sim_steps_total", "Scheduler steps, by the resource that bounded them.", "bound")
	m.admissionStops = c("knee_sim_admission_stops_total", "Steps by why admission of waiting requests stopped.", "reason")
	m.faults = c("knee_sim_faults_injected_total", "Faults injected on purpose, by kind.", "kind")
	m.running = g("vllm:num_requests_running", "Number of requests in model execution batches.")
	m.waiting = g("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
	m.kvUsage = g("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
	// vLLM publishes its cache configuration as an info gauge (value 1,
	// the facts in labels); dashboards read capacity from num_gpu_blocks.
	m.CacheConfig = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:cache_config_info", Help: "Information of the LLMEngine CacheConfig"},
		[]string{"model_name", "engine", "block_size", "cache_dtype", "enable_prefix_caching", "gpu_memory_utilization", "num_gpu_blocks"})
	m.Reg.MustRegister(m.CacheConfig)
	// vLLM's LoRA state: one series, its labels the adapters of the
	// running and the waiting requests, its value when it was set.
	m.LoRAInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:lora_requests_info", Help: "Running stats on lora requests."},
		[]string{"max_lora", "waiting_lora_adapters", "running_lora_adapters"})
	m.Reg.MustRegister(m.LoRAInfo)
	return m
}

// SetLoRA publishes the LoRA state: the slots and the adapters of the
// running and the waiting requests (comma-separated names).
func (m *Metrics) SetLoRA(maxLoRAs int, running, waiting string, at float64) {
	m.LoRAInfo.Reset()
	m.LoRAInfo.WithLabelValues(strconv.Itoa(maxLoRAs), waiting, running).Set(at)
}

// ModelMetrics are one model's collectors with their labels bound, so the
// per-token path does no label lookup.
type ModelMetrics struct {
	TTFT, ITL, TPOT, E2E, Queue, Inference, Prefill, Decode prometheus.Observer
	PromptTok, GenTok, MaxTokens, KVComputed, NumPreempt    prometheus.Observer
	IterTokens, Lag, StepDuration, StepBatch                prometheus.Observer
	PromptTotal, GenTotal, Preemptions                      prometheus.Counter
	PrefixQueries, PrefixHits                               prometheus.Counter
	Success                                                 map[string]prometheus.Counter
	ComputeBound, MemoryBound                               prometheus.Counter
	admissionStops                                          *prometheus.CounterVec
	faults                                                  *prometheus.CounterVec
	Running, Waiting, KVUsage                               prometheus.Gauge
	labels                                                  []string
}

// ForModel binds the collectors to a model's labels.
func (m *Metrics) ForModel(name string) *ModelMetrics {
	l := []string{name, "0"}
	mm := &ModelMetrics{
		TTFT: m.ttft.WithLabelValues(l...), ITL: m.itl.WithLabelValues(l...), TPOT: m.tpot.WithLabelValues(l...),
		E2E: m.e2e.WithLabelValues(l...), Queue: m.queue.WithLabelValues(l...), Inference: m.inference.WithLabelValues(l...),
		Prefill: m.prefill.WithLabelValues(l...), Decode: m.decode.WithLabelValues(l...),
		PromptTok: m.promptTok.WithLabelValues(l...), GenTok: m.genTok.WithLabelValues(l...),
		MaxTokens: m.maxTokens.WithLabelValues(l...), KVComputed: m.kvComputed.WithLabelValues(l...),
		NumPreempt: m.numPreempt.WithLabelValues(l...), IterTokens: m.iterTokens.WithLabelValues(l...),
		Lag: m.lag.WithLabelValues(l...), StepDuration: m.stepDuration.WithLabelValues(l...),
		StepBatch:   m.stepBatch.WithLabelValues(l...),
		PromptTotal: m.promptTotal.WithLabelValues(l...), GenTotal: m.genTotal.WithLabelValues(l...),
		Preemptions: m.preemptions.WithLabelValues(l...), PrefixQueries: m.prefixQueries.WithLabelValues(l...),
		PrefixHits: m.prefixHits.WithLabelValues(l...), Success: map[string]prometheus.Counter{},
		ComputeBound: m.steps.WithLabelValues(name, "0", "compute"), MemoryBound: m.steps.WithLabelValues(name, "0", "memory"),
		admissionStops: m.admissionStops, faults: m.faults,
		Running: m.running.WithLabelValues(l...), Waiting: m.waiting.WithLabelValues(l...), KVUsage: m.kvUsage.WithLabelValues(l...),
		labels: l,
	}
	// vLLM pre-creates the success counter for every finish reason.
	for _, r := range finishReasons {
		mm.Success[r] = m.success.WithLabelValues(name, "0", r)
	}
	return mm
}

// Fault counts a fault injected on purpose.
func (mm *ModelMetrics) Fault(kind string) {
	mm.faults.WithLabelValues(mm.labels[0], mm.labels[1], kind).Inc()
}

// AdmissionStop counts a step by why admission stopped.
func (mm *ModelMetrics) AdmissionStop(reason string) {
	mm.admissionStops.WithLabelValues(mm.labels[0], mm.labels[1], reason).Inc()
}

// ObserveStep records one scheduler step in the Prometheus metrics.
// ObserveStep records one scheduler step: its tokens, duration and
// batch, what bounded it, why admission stopped, preemptions, prefix-cache
// lookups, and the engine's state after it.
func (mm *ModelMetrics) ObserveStep(st *sched.Step) {
	mm.IterTokens.Observe(float64(st.ScheduledTokens))
	mm.StepDuration.Observe(st.Duration)
	mm.StepBatch.Observe(float64(st.BatchSize))
	if st.Compute >= st.Memory {
		mm.ComputeBound.Inc()
	} else {
		mm.MemoryBound.Inc()
	}
	if st.Waiting > 0 || st.StopReason != sched.StopNone {
		mm.AdmissionStop(st.StopReason)
	}
	if n := len(st.Preempted); n > 0 {
		mm.Preemptions.Add(float64(n))
	}
	if st.PrefixQueries > 0 {
		mm.PrefixQueries.Add(float64(st.PrefixQueries))
		mm.PrefixHits.Add(float64(st.PrefixHit))
	}
	mm.Running.Set(float64(st.Running))
	mm.Waiting.Set(float64(st.Waiting))
	mm.KVUsage.Set(st.KVUsage)
}
