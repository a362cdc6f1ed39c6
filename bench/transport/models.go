package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/kneebench/knee/results"
	"github.com/valyala/fasthttp"
)

// ModelInfo is what a target's model list says of one model.
type ModelInfo struct {
	ID string
	// ContextTokens is the longest sequence (prompt and answer) the server
	// takes for the model: vLLM's and knee sim's max_model_len, llama.cpp's
	// meta.n_ctx (shared by its slots); 0 when the list does not say.
	ContextTokens int
}

// ListModelInfo returns the models a target serves, with what the list
// says of each. Connecting, the TLS handshake and the answer are bounded
// by the target's --timeout (10 s when none), and ctx ending (the first
// signal) ends the wait.
func ListModelInfo(ctx context.Context, t Target) ([]ModelInfo, error) {
	modelsURL := joinURL(t.BaseURL, "/models")
	timeout := t.Timeout
	if timeout <= 0 || timeout > 10*time.Second {
		timeout = 10 * time.Second
	}
	type answer struct {
		body     []byte
		status   int
		location string
		err      error
	}
	done := make(chan answer, 1)
	go func() {
		body, status, loc, err := callWithLocation(t, fasthttp.MethodGet, modelsURL, nil, timeout)
		done <- answer{body, status, loc, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("listing models at %s: interrupted", results.RedactURL(modelsURL))
	}
	body, status, err := a.body, a.status, a.err
	if err != nil {
		return nil, fmt.Errorf("listing models at %s: %w", results.RedactURL(modelsURL), err)
	}
	if status >= 300 && status < 400 {
		return nil, fmt.Errorf("listing models at %s: %w: %s", results.RedactURL(modelsURL), ErrRedirect, redirectText(status, a.location))
	}
	if status != 200 {
		_, msg := httpErrorClass(status, body)
		hint := ""
		if u, err := url.Parse(t.BaseURL); status == 404 && err == nil && !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1") {
			hint = fmt.Sprintf(" (the API root usually ends in /v1: try --base-url %s)", results.RedactURL(joinURL(t.BaseURL, "/v1")))
		}
		return nil, &ModelsStatusError{fmt.Errorf("listing models at %s: HTTP %d %s%s", results.RedactURL(modelsURL), status, msg, hint)}
	}
	var v struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
			Meta        struct {
				NCtx int `json:"n_ctx"`
			} `json:"meta"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("listing models: %v", err)
	}
	models := make([]ModelInfo, len(v.Data))
	for i, m := range v.Data {
		models[i] = ModelInfo{ID: m.ID, ContextTokens: max(m.MaxModelLen, m.Meta.NCtx, 0)}
	}
	return models, nil
}

// ErrRedirect marks a target that answered with a redirect: the wrong
// URL, which knee does not follow.
var ErrRedirect = errors.New("redirected")

// ModelsStatusError is a model listing the server answered with an HTTP
// error: it is up, and may serve completions without a list.
type ModelsStatusError struct{ err error }

func (e *ModelsStatusError) Error() string { return e.err.Error() }

// call sends one small non-streaming request.
func call(t Target, method, rawURL string, body []byte, timeout time.Duration) ([]byte, int, error) {
	b, status, _, err := callWithLocation(t, method, rawURL, body, timeout)
	return b, status, err
}

// callWithLocation is call that also returns a redirect's Location.
func callWithLocation(t Target, method, rawURL string, body []byte, timeout time.Duration) ([]byte, int, string, error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(rawURL)
	if t.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.APIKey)
	}
	for _, h := range t.Headers {
		req.Header.Set(h[0], h[1])
	}
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	c := &fasthttp.Client{MaxResponseBodySize: 64 << 20, Dial: func(addr string) (net.Conn, error) {
		nc, err := t.Dial(addr, timeout)
		if err != nil || !strings.HasPrefix(rawURL, "https:") {
			return nc, err
		}
		host, _, _ := net.SplitHostPort(addr)
		if u, err := url.Parse(rawURL); err == nil {
			host = u.Hostname()
		}
		return handshake(nc, host, timeout)
	}}
	if err := c.DoTimeout(req, resp, timeout); err != nil {
		return nil, 0, "", err
	}
	return append([]byte(nil), resp.Body()...), resp.StatusCode(), string(resp.Header.Peek("Location")), nil
}

// Fetch sends one small request that is not a completion (a metrics
// scrape, a reset) with the target's credentials and headers, bounded by
// timeout, and returns the body and the status.
func Fetch(t Target, method, rawURL string, body []byte, timeout time.Duration) ([]byte, int, error) {
	return call(t, method, rawURL, body, timeout)
}
