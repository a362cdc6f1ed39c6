package results

import "fmt"

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
	// Offered is how many successful requests were offered tools, and
	// RequiredNotCalled how many of those answered without a call when
	// tool_choice required one (required, or a tool's name).
	Offered           int64 `json:"offered,omitempty"`
	RequiredNotCalled int64 `json:"required_not_called,omitempty"`
}

// JudgeTools says what offering tools came to: how many answers were
// offered tools and called none, and, when tool_choice required a call,
// a warning for every answer without one (a server that ignores
// tool_choice measures another workload). A mix's classes are judged
// each by its own.
func (r *Run) JudgeTools() {
	for _, c := range r.Classes {
		c.JudgeTools()
	}
	if r.Config.Tools == "" || r.Requests.OK == 0 {
		return
	}
	if r.ToolCalls == nil {
		r.ToolCalls = &ToolCalls{}
	}
	t := r.ToolCalls
	t.Offered = r.Requests.OK
	choice := r.Config.ToolChoice
	required := choice != "" && choice != "auto" && choice != "none"
	switch {
	case required && t.Requests < t.Offered:
		t.RequiredNotCalled = t.Offered - t.Requests
		r.Warnings = append(r.Warnings, fmt.Sprintf("tool_choice %s required a call, but %d of %d answers called no tool: the server did not honour tool_choice, and the load is not the one asked",
			choice, t.RequiredNotCalled, t.Offered))
	case t.Requests == 0 && choice != "none":
		r.Notes = append(r.Notes, fmt.Sprintf("tools were offered to %s and none called one", Plural(t.Offered, "answer")))
	}
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
		t.Offered += s.ToolCalls.Offered
		t.RequiredNotCalled += s.ToolCalls.RequiredNotCalled
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
	// Uploads is how many of the requests got a first token: over them
	// UploadNs sums the uploads (from the send to the body's last byte
	// handed to the socket) and TTFTSchedNs the TTFTs from the scheduled
	// send, so UploadShare is the part of TTFT spent sending bodies;
	// UploadMaxNs is the longest upload, UploadMeanMs the mean.
	Uploads      int64    `json:"uploads"`
	UploadNs     int64    `json:"upload_ns_total"`
	TTFTSchedNs  int64    `json:"ttft_sched_ns_total"`
	UploadMaxNs  int64    `json:"upload_max_ns"`
	UploadMeanMs *float64 `json:"upload_mean_ms,omitempty"`
	UploadShare  *float64 `json:"upload_share_of_ttft,omitempty"`
	// Served, when knee served the images itself (--image-serve), is
	// how many the target fetched over the level: ImageBytes is then the
	// URLs', not the images'.
	Served *int64 `json:"served,omitempty"`
}

// Derive sets the figures drawn from the sums: the mean upload and its
// share of TTFT.
func (im *Images) Derive() {
	im.UploadMeanMs, im.UploadShare = nil, nil
	if im.Uploads > 0 {
		v := float64(im.UploadNs) / float64(im.Uploads) / 1e6
		im.UploadMeanMs = &v
	}
	if im.TTFTSchedNs > 0 {
		v := float64(im.UploadNs) / float64(im.TTFTSchedNs)
		im.UploadShare = &v
	}
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
		t.Uploads += x.Uploads
		t.UploadNs += x.UploadNs
		t.TTFTSchedNs += x.TTFTSchedNs
		t.UploadMaxNs = max(t.UploadMaxNs, x.UploadMaxNs)
	}
	if t != nil {
		t.Derive()
	}
	if t != nil && t.TextTokens > 0 && t.Images > 0 {
		v := float64(t.PromptTokens-t.TextTokens) / float64(t.Images)
		t.TokensPerImage = &v
	}
	m.Images = t
}
