package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/kneebench/knee/bench/transport"
)

// CacheReset asks a live target to drop its prefix cache before each
// level, so every level of a sweep starts cold without a restart. The
// engine is found by its endpoint: vLLM's (and knee sim's) POST
// /reset_prefix_cache, then SGLang's POST /flush_cache; the first that
// answers is kept for the levels after.
type CacheReset struct {
	target transport.Target
	client *http.Client
	// path is the endpoint found, once one answered.
	path string
	// Retry is how long a refusal because requests are still running
	// (SGLang's 400, knee sim's 409) is retried before giving up: a
	// level's cut requests may take a moment to leave the server.
	Retry time.Duration
}

// NewCacheReset is a reset of target's prefix cache.
func NewCacheReset(target transport.Target) *CacheReset {
	c := &http.Client{Timeout: 30 * time.Second}
	if target.Network != nil {
		c.Transport = &http.Transport{DisableKeepAlives: true,
			DialContext: func(_ context.Context, _, addr string) (net.Conn, error) { return target.Dial(addr, 10*time.Second) }}
	}
	return &CacheReset{target: target, client: c, Retry: 10 * time.Second}
}

// resetPaths are the engines' reset endpoints, in the order tried.
var resetPaths = []string{"/reset_prefix_cache", "/flush_cache"}

// ErrNoCacheReset is a server that offers no prefix-cache reset.
var ErrNoCacheReset = errors.New("the server offers no prefix-cache reset: vLLM serves POST /reset_prefix_cache only with VLLM_SERVER_DEV_MODE=1 set, SGLang serves POST /flush_cache, llama.cpp has none")

// Reset drops the target's prefix cache and says which endpoint did it.
func (r *CacheReset) Reset(ctx context.Context) (string, error) {
	paths := resetPaths
	if r.path != "" {
		paths = []string{r.path}
	}
	deadline := time.Now().Add(r.Retry)
	for _, p := range paths {
		for {
			status, body, err := r.post(ctx, p)
			switch {
			case err != nil:
				return "", fmt.Errorf("POST %s: %w", p, err)
			case status/100 == 2:
				r.path = p
				return "POST " + p, nil
			case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
				// Not this engine's endpoint (or, for vLLM, dev mode off).
			case (status == http.StatusBadRequest || status == http.StatusConflict) && time.Now().Before(deadline):
				// Requests still running: SGLang (400) and knee sim (409)
				// refuse until they end.
				if !transport.SleepCtx(ctx, 250*time.Millisecond) {
					return "", ctx.Err()
				}
				continue
			default:
				return "", fmt.Errorf("POST %s refused the reset: %d %s", p, status, body)
			}
			break
		}
	}
	if r.path != "" {
		return "", fmt.Errorf("POST %s no longer answers: %w", r.path, ErrNoCacheReset)
	}
	return "", ErrNoCacheReset
}

// post sends an empty POST to the server's root path p and returns the
// status and the start of the body.
func (r *CacheReset) post(ctx context.Context, p string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, transport.RootURL(r.target.BaseURL)+p, nil)
	if err != nil {
		return 0, "", err
	}
	if r.target.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.target.APIKey)
	}
	for _, h := range r.target.Headers {
		req.Header.Set(h[0], h[1])
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode, strings.TrimSpace(string(bytes.ToValidUTF8(b, []byte("?")))), nil
}

// Profiler starts the server's profiler as a level's measured window
// starts and stops it once the window drained, so the trace holds the
// measured load and not the warm-up (vLLM's and SGLang's POST
// /start_profile and /stop_profile; knee sim's with --profile-dir).
type Profiler struct {
	reset *CacheReset
	// refused, once set, is the server's refusal: later levels do not
	// ask again.
	refused error
}

// NewProfiler is a profiler of target.
func NewProfiler(target transport.Target) *Profiler {
	return &Profiler{reset: NewCacheReset(target)}
}

// ErrNoProfiler is a server that offers no profiler endpoint.
var ErrNoProfiler = errors.New("the server offers no profiler: vLLM serves POST /start_profile only with VLLM_TORCH_PROFILER_DIR set, SGLang serves it by default, knee sim with --profile-dir, llama.cpp has none")

// Start starts the profiler.
func (p *Profiler) Start(ctx context.Context) error { return p.call(ctx, "/start_profile") }

// Stop stops it (the server then writes its trace).
func (p *Profiler) Stop(ctx context.Context) error { return p.call(ctx, "/stop_profile") }

func (p *Profiler) call(ctx context.Context, path string) error {
	if p.refused != nil {
		return p.refused
	}
	status, body, err := p.reset.post(ctx, path)
	switch {
	case err != nil:
		return fmt.Errorf("POST %s: %w", path, err)
	case status/100 == 2:
		return nil
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		p.refused = ErrNoProfiler
	default:
		p.refused = fmt.Errorf("POST %s refused: %d %s", path, status, body)
	}
	return p.refused
}
