package driver

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kneebench/knee/bench/record"
)

// refusals tally a warm-up's outcomes: a server that refuses every
// warm-up request with a client error (400, 401, 403, 404, 422…) will
// refuse the window's too, and running it would only measure refusals.
type refusals struct {
	mu            sync.Mutex
	refused, rest int
	class, text   string
}

// add counts an unmeasured request's end.
func (w *refusals) add(rec *record.Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !refusal(rec.Status, rec.Message) {
		w.rest++
		return
	}
	w.refused++
	if w.class == "" {
		w.class, w.text = rec.Class, rec.Message
	}
}

// refusal is an answer that asking again will not change: a 4xx other
// than 408 (timeout) and 429 (too many requests); 501, a server that does
// not implement the API (llama-server's embeddings without --embeddings);
// or a 5xx that says what is not supported (llama-server's 500 "image input
// is not supported" from a text-only model).
func refusal(status int, message string) bool {
	switch {
	case status >= 400 && status < 500:
		return status != 408 && status != 429
	case status == 501:
		return true
	}
	return status >= 500 && strings.Contains(strings.ToLower(message), "not supported")
}

// err is why the window must not start: every warm-up request refused.
func (w *refusals) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refused == 0 || w.rest > 0 {
		return nil
	}
	return &RefusedError{Requests: w.refused, Class: w.class, Message: w.text}
}

// RefusedError says the server refused every warm-up request, in its own
// words, and the flag most likely behind it.
type RefusedError struct {
	Requests       int
	Class, Message string
}

func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("the server refused all %d warm-up requests (%s): %q; nothing was measured", e.Requests, e.Class, e.Message)
	if flag := likelyFlag(e.Class, e.Message); flag != "" {
		msg += "; check " + flag
	}
	return msg
}

// refusalHints map words of a refusal to the flag most likely behind it.
var refusalHints = []struct{ words, flag string }{
	{"multimodal", "--image-count (this model takes no images)"},
	{"image", "--image-count"},
	{"does not support the", "--endpoint (the model serves another API)"},
	{"context length", "--input-tokens and --max-tokens (the prompt and answer do not fit)"},
	{"maximum context", "--input-tokens and --max-tokens (the prompt and answer do not fit)"},
	{"max_tokens", "--max-tokens"},
	{"does not exist", "--model"},
	{"not found", "--model"},
	{"priority", "--mix's priorities (the server schedules first come, first served)"},
	{"tool", "--tools"},
	{"reasoning", "--reasoning-effort"},
	// Last: the words above name what is not supported more closely.
	{"does not support", "--endpoint (the server serves another API; see its words)"},
}

// likelyFlag is the flag a refusal most likely points at ("" when its
// words say nothing knee knows).
func likelyFlag(class, message string) string {
	if strings.HasPrefix(class, "http_401") || strings.HasPrefix(class, "http_403") {
		return "--api-key"
	}
	m := strings.ToLower(message)
	if strings.HasPrefix(class, "http_404") && !strings.Contains(m, "model") {
		// A 404 that names no model is a path the server does not serve
		// (llama-server's "File Not Found", uvicorn's "Not Found").
		return "--endpoint and --base-url (the server serves nothing at that path)"
	}
	for _, h := range refusalHints {
		if strings.Contains(m, h.words) {
			return h.flag
		}
	}
	return ""
}
