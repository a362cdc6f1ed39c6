package results

// ToolCalls is what a run's answers did with the tools they were offered
// (or were streamed, offered or not).
type ToolCalls struct {
	// Requests is how many successful requests answered with a tool call;
	// FinishToolCalls how many of them said so in finish_reason.
	Requests        int64 `json:"requests"`
	FinishToolCalls int64 `json:"finish_tool_calls"`
	// ArgumentChunks is the chunks that carried calls (a name, a piece of
	// arguments): as counted from the stream. The server's usage counts
	// them among the completion tokens.
	ArgumentChunks int64 `json:"argument_chunks"`
}

// mergeTools sums the shards' tool-call accounts.
func mergeTools(m *Run, shards []*Run) {
	var t *ToolCalls
	for _, s := range shards {
		if s.ToolCalls == nil {
			continue
		}
		if t == nil {
			t = &ToolCalls{}
		}
		t.Requests += s.ToolCalls.Requests
		t.FinishToolCalls += s.ToolCalls.FinishToolCalls
		t.ArgumentChunks += s.ToolCalls.ArgumentChunks
	}
	m.ToolCalls = t
}

// Images is what a run's requests sent in images: counts over the
// requests that succeeded.
type Images struct {
	Requests   int64 `json:"requests"`
	Images     int64 `json:"images"`
	ImageBytes int64 `json:"image_bytes"`
	// BodyBytes is the requests' bodies, images included.
	BodyBytes int64 `json:"body_bytes"`
	// PromptTokens is the server's count of those requests' prompts,
	// images included; TextTokens what their text was sized to (0: not
	// sized), so TokensPerImage is the images' cost as the server
	// counts it.
	PromptTokens   int64    `json:"prompt_tokens"`
	TextTokens     int64    `json:"text_tokens,omitempty"`
	TokensPerImage *float64 `json:"tokens_per_image,omitempty"`
}

// mergeImages sums the shards' image accounts.
func mergeImages(m *Run, shards []*Run) {
	var t *Images
	for _, s := range shards {
		if s.Images == nil {
			continue
		}
		if t == nil {
			t = &Images{}
		}
		x := s.Images
		t.Requests += x.Requests
		t.Images += x.Images
		t.ImageBytes += x.ImageBytes
		t.BodyBytes += x.BodyBytes
		t.PromptTokens += x.PromptTokens
		t.TextTokens += x.TextTokens
	}
	if t != nil && t.TextTokens > 0 && t.Images > 0 {
		v := float64(t.PromptTokens-t.TextTokens) / float64(t.Images)
		t.TokensPerImage = &v
	}
	m.Images = t
}
