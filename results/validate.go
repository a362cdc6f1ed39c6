package results

// ValidationTurn is one turn of knee validate's call.
type ValidationTurn struct {
	Turn           int  `json:"turn"`
	PromptTokens   int  `json:"prompt_tokens"`
	CachedTokens   int  `json:"cached_tokens"`
	CachedReported bool `json:"cached_reported"`
	// CachedSource is where the cached count came from: "usage"
	// (usage.prompt_tokens_details.cached_tokens) or "timings" (llama.cpp's
	// timings.cache_n).
	CachedSource string  `json:"cached_source,omitempty"`
	TTFTMs       float64 `json:"ttft_ms"`
	Error        string  `json:"error,omitempty"`
	Message      string  `json:"message,omitempty"`
}

// Validation is the outcome of knee validate.
type Validation struct {
	Turns []ValidationTurn `json:"turns"`
	OK    bool             `json:"ok"`
	// Verdict is the one-line conclusion; Diagnosis says what to fix.
	Verdict   string `json:"verdict"`
	Diagnosis string `json:"diagnosis,omitempty"`
}
