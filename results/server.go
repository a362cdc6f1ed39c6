package results

// Server is the server's own account of the measured window, next to the
// client's, when the target publishes one.
type Server struct {
	// Source says where the figures came from: "knee-sim" for the bundled
	// simulator's /metrics/summary, "vllm" or "sglang" for Prometheus
	// metrics scraped before and after the window.
	Source string `json:"source"`
	// BucketEstimates is true when percentiles were interpolated within
	// Prometheus histogram buckets rather than computed exactly.
	BucketEstimates bool  `json:"bucket_estimates"`
	Requests        int64 `json:"requests"`
	PromptTokens    int64 `json:"prompt_tokens,omitempty"`
	OutputTokens    int64 `json:"output_tokens,omitempty"`
	Preemptions     int64 `json:"preemptions,omitempty"`
	// PrefixHitRate is hits/queries of the prefix cache over the window.
	PrefixHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`

	Figures []Figure `json:"figures"`
	// Lag is the simulator's token lag (release time − deadline), ms.
	Lag *Summary `json:"lag,omitempty"`
	// Gauges sampled during the window (mean and max).
	Gauges   map[string]GaugeStats `json:"gauges,omitempty"`
	Warnings []string              `json:"warnings,omitempty"`
}

// Figure is one row of the client/server comparison, in milliseconds (or
// tokens per second for throughput). Missing values are nil.
type Figure struct {
	Name      string   `json:"name"`
	Client    *float64 `json:"client"`
	Server    *float64 `json:"server"`
	Simulated *float64 `json:"simulated,omitempty"`
	Delivery  *float64 `json:"delivery"`
}

// GaugeStats summarises a gauge sampled during the window.
type GaugeStats struct {
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
	Samples int     `json:"samples"`
}
