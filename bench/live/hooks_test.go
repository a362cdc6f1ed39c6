package live

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kneebench/knee/bench"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/workload"
)

// resetServer is an in-test server with an engine's reset endpoints: it
// records every call, answers paths it does not serve with 404 (as vLLM
// without its dev mode, and llama.cpp, do), and refuses the first busy
// calls with busyStatus (SGLang's 400 while requests run).
type resetServer struct {
	mu         sync.Mutex
	calls      []string
	auth       []string
	serves     string
	busy       int
	busyStatus int
}

func (s *resetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, r.Method+" "+r.URL.Path)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	switch {
	case r.URL.Path != s.serves:
		http.NotFound(w, r)
	case s.busy > 0:
		s.busy--
		http.Error(w, "Cache not flushed because there are pending requests.", s.busyStatus)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// TestCacheResetFindsTheEngine: the reset finds each engine's endpoint,
// keeps it for the next level, waits out a refusal while requests run,
// sends the key, and names what to do when the server offers none.
func TestCacheResetFindsTheEngine(t *testing.T) {
	quiet.Wire(t, func() { testCacheResetFindsTheEngine(t) })
}

func testCacheResetFindsTheEngine(t *testing.T) {
	for _, tc := range []struct {
		name, serves string
		busy         int
		want         string
		err          error
		// calls is what the server saw over two resets.
		calls []string
	}{
		{name: "vllm", serves: "/reset_prefix_cache", want: "POST /reset_prefix_cache",
			calls: []string{"POST /reset_prefix_cache", "POST /reset_prefix_cache"}},
		{name: "sglang, busy once", serves: "/flush_cache", busy: 1, want: "POST /flush_cache",
			calls: []string{"POST /reset_prefix_cache", "POST /flush_cache", "POST /flush_cache", "POST /flush_cache"}},
		{name: "none (vLLM without dev mode, llama.cpp)", serves: "/nothing", err: ErrNoCacheReset,
			calls: []string{"POST /reset_prefix_cache", "POST /flush_cache", "POST /reset_prefix_cache", "POST /flush_cache"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &resetServer{serves: tc.serves, busy: tc.busy, busyStatus: http.StatusBadRequest}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			r := NewCacheReset(transport.Target{BaseURL: ts.URL + "/v1", APIKey: "k"})
			for range 2 {
				how, err := r.Reset(context.Background())
				if !errors.Is(err, tc.err) || how != tc.want {
					t.Fatalf("reset: %q, %v; want %q, %v", how, err, tc.want, tc.err)
				}
			}
			if !slices.Equal(srv.calls, tc.calls) {
				t.Errorf("calls %v, want %v", srv.calls, tc.calls)
			}
			for _, a := range srv.auth {
				if a != "Bearer k" {
					t.Errorf("a call carried Authorization %q", a)
				}
			}
		})
	}
}

// TestCacheResetGivesUp: a server that stays busy past the retry, or
// answers with another error, is refused with its answer.
func TestCacheResetGivesUp(t *testing.T) {
	quiet.Wire(t, func() { testCacheResetGivesUp(t) })
}

func testCacheResetGivesUp(t *testing.T) {
	srv := &resetServer{serves: "/reset_prefix_cache", busy: 1 << 20, busyStatus: http.StatusConflict}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	r := NewCacheReset(transport.Target{BaseURL: ts.URL + "/v1"})
	r.Retry = 0
	if _, err := r.Reset(context.Background()); err == nil || !strings.Contains(err.Error(), "409") || !strings.Contains(err.Error(), "pending requests") {
		t.Errorf("a busy server: %v", err)
	}
}

// TestHooksAroundTheWindow: a live level resets the cache before its
// first request, starts the profiler once the warm-up is done and stops
// it once the window drained: the server sees the reset before any
// completion, the start after the 2 warm-up requests and the stop after
// all 7; the level's notes say both.
func TestHooksAroundTheWindow(t *testing.T) {
	quiet.Wire(t, func() { testHooksAroundTheWindow(t) })
}

func testHooksAroundTheWindow(t *testing.T) {
	stream := &fakeserver.Stream{Tokens: 2}
	var mu sync.Mutex
	seen := map[string]int64{}
	mark := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = stream.Requests.Load()
		mu.Unlock()
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/chat/completions", stream)
	for _, p := range []string{"/reset_prefix_cache", "/start_profile", "/stop_profile"} {
		mux.HandleFunc(p, mark)
	}
	target := transport.Target{BaseURL: fakeserver.Start(t, mux), Model: "m"}
	reset, profiler := NewCacheReset(target), NewProfiler(target)
	live := &Live{Target: target, Watch: func() bench.Watcher {
		return bench.Watchers{reset.Watcher(), profiler.Watcher()}
	}}
	res, err := live.Run(context.Background(), &bench.Level{Work: bench.Requests{Source: workload.FixedPrompt{Text: "hi", MaxTokens: 2},
		Load: driver.Load{Concurrency: 1, Requests: 5, Warmup: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"/reset_prefix_cache": 0, "/start_profile": 2, "/stop_profile": 7}
	if !maps.Equal(seen, want) {
		t.Errorf("completions sent when each hook was called: %v, want %v", seen, want)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "prefix cache was reset") || !strings.Contains(notes, "profiler ran over") || strings.Contains(strings.Join(res.Warnings, "\n"), "profiler") {
		t.Errorf("notes %q, warnings %q", res.Notes, res.Warnings)
	}
}
