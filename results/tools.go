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
