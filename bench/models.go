package bench

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kneebench/knee/results"
	"github.com/valyala/fasthttp"
)

// FirstModel asks GET {base}/models for the served models and returns the
// first id.
func FirstModel(t Target) (string, error) {
	ids, err := ListModels(t)
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("%s lists no model; give --model", results.RedactURL(joinURL(t.BaseURL, "/models")))
	}
	return ids[0], nil
}

// ListModels returns the model ids a target serves.
func ListModels(t Target) ([]string, error) {
	modelsURL := joinURL(t.BaseURL, "/models")
	body, status, err := get(t, modelsURL, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("listing models at %s: %w", results.RedactURL(modelsURL), err)
	}
	if status != 200 {
		_, msg := httpErrorClass(status, body)
		hint := ""
		if u, err := url.Parse(t.BaseURL); status == 404 && err == nil && !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1") {
			hint = fmt.Sprintf(" (the API root usually ends in /v1: try --base-url %s)", results.RedactURL(joinURL(t.BaseURL, "/v1")))
		}
		return nil, fmt.Errorf("listing models at %s: HTTP %d %s%s", results.RedactURL(modelsURL), status, msg, hint)
	}
	var v struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("listing models: %v", err)
	}
	ids := make([]string, len(v.Data))
	for i, m := range v.Data {
		ids[i] = m.ID
	}
	return ids, nil
}

// get fetches url with the target's credentials and headers.
func get(t Target, url string, timeout time.Duration) ([]byte, int, error) {
	return call(t, fasthttp.MethodGet, url, nil, timeout)
}

// call sends one small non-streaming request.
func call(t Target, method, url string, body []byte, timeout time.Duration) ([]byte, int, error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
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
	c := &fasthttp.Client{MaxResponseBodySize: 64 << 20}
	if err := c.DoTimeout(req, resp, timeout); err != nil {
		return nil, 0, err
	}
	return append([]byte(nil), resp.Body()...), resp.StatusCode(), nil
}
