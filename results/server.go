package results

// Server is the server's own account of the measured window, next to the
// client's, when the target publishes one.
type Server struct {
	// Source says where the figures came from: "knee-sim" for the bundled
	// simulator's /metrics/summary, "vllm", "sglang" or "llamacpp" for
	// Prometheus metrics scraped before and after the window.
	Source string `json:"source"`
	// BucketEstimates is true when percentiles were interpolated within
	// Prometheus histogram buckets rather than computed exactly.
	BucketEstimates bool  `json:"bucket_estimates"`
	Requests        int64 `json:"requests"`
	// RequestsFrom says where Requests came from when the server counts
	// none: "timings" (llama.cpp's per-response timings, one per answer
	// the client read) or "none" (not known; Requests is 0).
	RequestsFrom string `json:"requests_from,omitempty"`
	// PromptTokens are the prompt tokens the server computed; CachedTokens
	// those it took from its prefix cache instead, where it counts them
	// apart (llama.cpp).
	PromptTokens int64 `json:"prompt_tokens,omitempty"`
	CachedTokens int64 `json:"cached_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
	Preemptions  int64 `json:"preemptions,omitempty"`
	// PrefixHitRate is hits/queries of the prefix cache over the window.
	PrefixHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`

	Figures []Figure `json:"figures"`
	// Lag is the simulator's token lag (release time − deadline), ms.
	Lag *Summary `json:"lag,omitempty"`
	// Gauges sampled during the window (mean and max).
	Gauges map[string]GaugeStats `json:"gauges,omitempty"`
	// LoRA is what vllm:lora_requests_info said during the window.
	LoRA *ServerLoRA `json:"lora,omitempty"`
	// Missing names the metrics knee reads that the server does not
	// export, so a "-" in the comparison is explained.
	Missing  []string `json:"missing_metrics,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Traffic holds what setting the server's counts against the client's
	// found (other traffic, a restart, warm-up turns, a shard's part), apart
	// from Warnings so that a merge of shards redoes that check against
	// the merged totals instead of repeating one shard's.
	Traffic []string `json:"traffic_warnings,omitempty"`
}

// Figure is one row of the client/server comparison, in milliseconds (or
// tokens per second for throughput). Missing values are nil.
type Figure struct {
	Name   string   `json:"name"`
	Client *float64 `json:"client"`
	// Server is the server's value. When Estimate is set it is a linear
	// interpolation inside the histogram bucket (ServerLow, ServerHigh]
	// that holds the percentile, which is all the server's data says; a
	// nil ServerHigh is the overflow bucket, and then Server is nil too.
	Server     *float64 `json:"server"`
	ServerLow  *float64 `json:"server_bucket_low,omitempty"`
	ServerHigh *float64 `json:"server_bucket_high,omitempty"`
	Estimate   bool     `json:"estimate,omitempty"`
	Simulated  *float64 `json:"simulated,omitempty"`
	// Delivery is client − server. It is nil where it cannot be told from
	// the data: a bucket wider than the difference it would show.
	Delivery *float64 `json:"delivery"`
}

// GaugeStats summarises a gauge sampled during the window.
type GaugeStats struct {
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
	Samples int     `json:"samples"`
}

// ServerLoRA is a LoRA server's state as sampled through a window: its
// adapter slots, the adapters seen running and waiting, and in how many
// of the samples some adapter's requests waited.
type ServerLoRA struct {
	MaxLoRAs       int      `json:"max_loras"`
	Running        []string `json:"running,omitempty"`
	Waiting        []string `json:"waiting,omitempty"`
	Samples        int      `json:"samples"`
	SamplesWaiting int      `json:"samples_waiting"`
	// WaitingSamples counts, by adapter, the samples that found its
	// requests waiting for a slot.
	WaitingSamples map[string]int `json:"waiting_samples,omitempty"`
	// Loads is the adapters loaded into a slot over the window (swaps
	// included), where the server counts them (knee sim); nil when not.
	Loads *int64 `json:"adapter_loads,omitempty"`
}
