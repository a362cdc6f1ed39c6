package live

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

func runAgainst(t *testing.T, c *transport.Client, load driver.Load) *results.Run {
	t.Helper()
	res, err := runLevel(context.Background(), c, workload.FixedPrompt{Text: "hi", MaxTokens: 3}, load)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func wantNoFailures(t *testing.T, name string, res *results.Run, ok int64) {
	t.Helper()
	if res.Requests.Failed != 0 || res.Requests.OK != ok {
		t.Errorf("%s: ok=%d failed=%d errors=%v, want %d ok and none failed", name, res.Requests.OK, res.Requests.Failed, res.Requests.Errors, ok)
	}
}

// TestServerClosesAfterEveryStream: llama.cpp's server sends keep-alive
// headers and closes the connection right after [DONE]. Reusing the dead
// connection used to fail every other request as connection_reset.
func TestServerClosesAfterEveryStream(t *testing.T) {
	quiet.Wire(t, func() { testServerClosesAfterEveryStream(t) })
}

func testServerClosesAfterEveryStream(t *testing.T) {
	s := &fakeserver.Raw{Serve: func(w *bufio.Writer, _ *http.Request, _ int) bool {
		fakeserver.WriteSSE(w, 3, "Connection: keep-alive\r\nKeep-Alive: timeout=5, max=100\r\n")
		return false
	}}
	url := fakeserver.StartRaw(t, s)
	for _, conc := range []int{1, 3} {
		c := newTestClient(t, url, 5*time.Second, conc)
		res := runAgainst(t, c, driver.Load{Concurrency: conc, Requests: 60, Warmup: 0})
		wantNoFailures(t, fmt.Sprintf("concurrency %d", conc), res, 60)
		if cs := res.Connections; cs == nil || cs.Opened < 60 {
			t.Errorf("concurrency %d: connections %+v, want one opened per request", conc, cs)
		}
	}
}

// TestServerClosesIdleConnections: uvicorn (in front of vLLM and SGLang)
// closes connections idle for 5 s, and the voice workload waits 5–7 s
// between turns. Here the server closes after 1 s and the gaps are 1.5 s.
func TestServerClosesIdleConnections(t *testing.T) {
	quiet.Wire(t, func() { testServerClosesIdleConnections(t) })
}

func testServerClosesIdleConnections(t *testing.T) {
	s := &fakeserver.Raw{IdleClose: time.Second, Serve: func(w *bufio.Writer, _ *http.Request, _ int) bool {
		fakeserver.WriteSSE(w, 3, "")
		return true
	}}
	url := fakeserver.StartRaw(t, s)
	c, err := transport.NewClient(transport.Target{BaseURL: url, Model: "m", Timeout: 5 * time.Second, IdleConnTimeout: time.Minute}, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v := workload.Voice{SystemPromptTokens: 30, UserTokens: 5, Turns: 3, GapMin: 1500 * time.Millisecond, GapMax: 1500 * time.Millisecond, OutputTokens: 3, Seed: 1}
	res, err := (&Live{Client: c}).Run(context.Background(), &bench.Level{Work: bench.Calls{Source: v, Load: driver.CallLoad{Rate: 10, Calls: 4, Seed: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests.Failed != 0 || res.Calls.Completed != 4 {
		t.Errorf("ok=%d failed=%d errors=%v calls %+v, want every call completed", res.Requests.OK, res.Requests.Failed, res.Requests.Errors, res.Calls)
	}
	if res.Connections.StaleClosed == 0 {
		t.Errorf("connections %+v: the idle closes were not noticed", res.Connections)
	}
}

// TestResendWhenReusedConnectionClosesUnanswered: the server reads the
// second request of every connection and closes without a byte (the race
// in which a keep-alive close crosses the next request). Each such request
// goes out once more on a fresh connection and succeeds; none fails.
func TestResendWhenReusedConnectionClosesUnanswered(t *testing.T) {
	quiet.Wire(t, func() { testResendWhenReusedConnectionClosesUnanswered(t) })
}

func testResendWhenReusedConnectionClosesUnanswered(t *testing.T) {
	s := &fakeserver.Raw{Serve: func(w *bufio.Writer, _ *http.Request, n int) bool {
		if n > 1 {
			return false
		}
		fakeserver.WriteSSE(w, 3, "")
		return true
	}}
	url := fakeserver.StartRaw(t, s)
	c := newTestClient(t, url, 5*time.Second, 1)
	res := runAgainst(t, c, driver.Load{Concurrency: 1, Requests: 10, Warmup: 0})
	wantNoFailures(t, "resend", res, 10)
	if got := res.Connections.Resent; got != 9 {
		t.Errorf("resent %d, want 9 (every request after the first met a closing connection)", got)
	}
}

// TestFreshConnectionFailureIsNotResent: a server that closes a new
// connection without answering has failed the request; knee must not send
// it again (that would double the load on a failing server).
func TestFreshConnectionFailureIsNotResent(t *testing.T) {
	quiet.Wire(t, func() { testFreshConnectionFailureIsNotResent(t) })
}

func testFreshConnectionFailureIsNotResent(t *testing.T) {
	s := &fakeserver.Raw{Serve: func(*bufio.Writer, *http.Request, int) bool { return false }}
	url := fakeserver.StartRaw(t, s)
	c := newTestClient(t, url, 5*time.Second, 1)
	res := runAgainst(t, c, driver.Load{Concurrency: 1, Requests: 5, Warmup: 0})
	if res.Requests.Errors[record.ClassConnectionReset] != 5 || res.Connections.Resent != 0 {
		t.Errorf("errors %v, connections %+v: want 5 connection_reset and nothing resent", res.Requests.Errors, res.Connections)
	}
	if got := s.Accepts.Load(); got != 5 {
		t.Errorf("the server saw %d connections, want 5", got)
	}
}

// TestConnectionCloseAndHTTP10: servers that say Connection: close, and
// HTTP/1.0 servers that end the body by closing, keep working.
func TestConnectionCloseAndHTTP10(t *testing.T) {
	quiet.Wire(t, func() { testConnectionCloseAndHTTP10(t) })
}

func testConnectionCloseAndHTTP10(t *testing.T) {
	closing := &fakeserver.Raw{Serve: func(w *bufio.Writer, _ *http.Request, _ int) bool {
		fakeserver.WriteSSE(w, 3, "Connection: close\r\n")
		return false
	}}
	http10 := &fakeserver.Raw{Serve: func(w *bufio.Writer, _ *http.Request, _ int) bool {
		fmt.Fprint(w, "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
		for i := 0; i < 3; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"t%d\"}}]}\n\n", i)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		return false
	}}
	for name, s := range map[string]*fakeserver.Raw{"Connection: close": closing, "HTTP/1.0": http10} {
		c := newTestClient(t, fakeserver.StartRaw(t, s), 5*time.Second, 2)
		res := runAgainst(t, c, driver.Load{Concurrency: 2, Requests: 20, Warmup: 0})
		wantNoFailures(t, name, res, 20)
	}
}

// dripServer sends the headers and one token at once, then every period
// either another token or (comments) an SSE comment, until the client goes
// away or limit passes.
func dripServer(period time.Duration, comments bool) *fakeserver.Raw {
	return &fakeserver.Raw{Serve: func(w *bufio.Writer, _ *http.Request, _ int) bool {
		fmt.Fprint(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		chunk := func(s string) error {
			fmt.Fprintf(w, "%x\r\n%s\r\n", len(s), s)
			return w.Flush()
		}
		_ = chunk("data: {\"choices\":[{\"delta\":{\"content\":\"first\"}}]}\n\n")
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
			time.Sleep(period)
			line := "data: {\"choices\":[{\"delta\":{\"content\":\"more\"}}]}\n\n"
			if comments {
				line = ": ping\n\n"
			}
			if chunk(line) != nil {
				return false
			}
		}
		return false
	}}
}

// TestCommentsDoNotResetTheTimeout: one token, then ": ping" forever. The
// pings are not content, so the request ends as an idle timeout after
// --timeout rather than never.
func TestCommentsDoNotResetTheTimeout(t *testing.T) {
	quiet.Wire(t, func() { testCommentsDoNotResetTheTimeout(t) })
}

func testCommentsDoNotResetTheTimeout(t *testing.T) {
	url := fakeserver.StartRaw(t, dripServer(50*time.Millisecond, true))
	c := newTestClient(t, url, 400*time.Millisecond, 1)
	start := time.Now()
	res := runAgainst(t, c, driver.Load{Concurrency: 1, Requests: 2, Warmup: 0})
	if res.Requests.Errors[record.ClassIdleTimeout] != 2 {
		t.Errorf("errors %v, want 2 idle_timeout", res.Requests.Errors)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v, want about 0.8 s", took)
	}
}

// TestRequestTimeoutBoundsADrip: a token every 100 ms never trips the
// 1 s gap timeout, so only the total deadline ends the request.
func TestRequestTimeoutBoundsADrip(t *testing.T) {
	quiet.Wire(t, func() { testRequestTimeoutBoundsADrip(t) })
}

func testRequestTimeoutBoundsADrip(t *testing.T) {
	url := fakeserver.StartRaw(t, dripServer(100*time.Millisecond, false))
	c, err := transport.NewClient(transport.Target{BaseURL: url, Model: "m", Timeout: time.Second, RequestTimeout: 600 * time.Millisecond}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var rec record.Record
	start := time.Now()
	c.Do(&workload.Request{Messages: []workload.Message{{Role: "user", Content: "x"}}}, &rec, false)
	if rec.Class != record.ClassRequestTimeout || rec.Chunks < 4 || rec.Chunks > 8 {
		t.Errorf("class %q after %d chunks, want request_timeout after about 6", rec.Class, rec.Chunks)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v, want about 0.6 s", took)
	}
}

// TestDrainTimeoutCutsStragglers: requests that drip for 20 s, a 300 ms
// window and a 400 ms drain: the run ends in well under a second after the
// window, the cut requests count as interrupted with the tokens they had.
func TestDrainTimeoutCutsStragglers(t *testing.T) {
	quiet.Wire(t, func() { testDrainTimeoutCutsStragglers(t) })
}

func testDrainTimeoutCutsStragglers(t *testing.T) {
	url := fakeserver.StartRaw(t, dripServer(100*time.Millisecond, false))
	c := newTestClient(t, url, 5*time.Second, 2)
	start := time.Now()
	res := runAgainst(t, c, driver.Load{Concurrency: 2, Duration: 300 * time.Millisecond, Warmup: 0, DrainTimeout: 400 * time.Millisecond})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v, want about 0.7 s", took)
	}
	if res.Requests.Interrupted != 2 || res.Requests.PartialTokens < 8 || res.Interrupted {
		t.Errorf("interrupted %d, partial tokens %d, run interrupted %v; want 2 cut requests with their tokens, the run itself not interrupted",
			res.Requests.Interrupted, res.Requests.PartialTokens, res.Interrupted)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "drain timeout") {
		t.Errorf("no warning about the drain cut: %q", res.Warnings)
	}
}

// TestWindowEndsWhileWaitingForSlots: 2,000 arrivals/s offered to one slot
// of a server that takes 50 ms a request, for 500 ms. The window closes
// on time; the arrivals still waiting for the slot are counted as unsent,
// not sent after it; and the slot wait is not the client's lateness.
func TestWindowEndsWhileWaitingForSlots(t *testing.T) {
	t.Parallel()
	inBubble(t, testWindowEndsWhileWaitingForSlots)
}

func testWindowEndsWhileWaitingForSlots(t *testing.T) {
	srv := &fakeserver.Stream{TTFT: 40 * time.Millisecond, ITL: 5 * time.Millisecond, Tokens: 3}
	url := fakeserver.Start(t, srv)
	c := newTestClient(t, url, 5*time.Second, 1)
	start := time.Now()
	res := runAgainst(t, c, driver.Load{Rate: 2000, Burstiness: 1, MaxConcurrency: 1, Duration: 500 * time.Millisecond, Warmup: 0, Seed: 1})
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("took %v for a 500 ms window", took)
	}
	if res.Requests.Sent > 15 || res.Arrivals.Unsent < 900 {
		t.Errorf("sent %d, unsent %d; want about 10 sent and about 990 unsent", res.Requests.Sent, res.Arrivals.Unsent)
	}
	if res.Health.Verdict == results.VerdictClientLimited || res.Arrivals.SendLatenessP99Ms > 10 {
		t.Errorf("health %s (%v), send lateness p99 %.2f ms: the slot wait was blamed on the client",
			res.Health.Verdict, res.Health.Reasons, res.Arrivals.SendLatenessP99Ms)
	}
}

// llamaServer answers like llama.cpp's llama-server: keep-alive headers,
// then a close after every stream; usage without cached_tokens, and a
// timings object in the final chunk whose cache_n counts the prompt
// tokens reused from the slot's cache (none for a connection's first
// request, all but 10 after).
func llamaServer() *fakeserver.Raw {
	var calls atomic.Int64
	return &fakeserver.Raw{Serve: func(w *bufio.Writer, _ *http.Request, _ int) bool {
		cacheN := 0
		if calls.Add(1) > 1 {
			cacheN = 110
		}
		fmt.Fprint(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5, max=100\r\n\r\n")
		chunk := func(s string) { fmt.Fprintf(w, "%x\r\n%s\r\n", len(s), s) }
		for i := 0; i < 4; i++ {
			chunk(fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w%d\"},\"finish_reason\":null}],\"object\":\"chat.completion.chunk\"}\n\n", i))
		}
		chunk(fmt.Sprintf("data: {\"choices\":[{\"finish_reason\":\"length\",\"index\":0,\"delta\":{}}],\"object\":\"chat.completion.chunk\","+
			"\"usage\":{\"completion_tokens\":4,\"prompt_tokens\":120,\"total_tokens\":124},"+
			"\"timings\":{\"cache_n\":%d,\"prompt_n\":%d,\"prompt_ms\":31.5,\"prompt_per_token_ms\":0.3,\"prompt_per_second\":3000,"+
			"\"predicted_n\":4,\"predicted_ms\":60,\"predicted_per_token_ms\":15,\"predicted_per_second\":66.6}}\n\n", cacheN, 120-cacheN))
		chunk("data: [DONE]\n\n")
		fmt.Fprint(w, "0\r\n\r\n")
		return false
	}}
}

// TestValidateAgainstLlamaCpp: knee validate against a llama.cpp-like
// server passes on timings.cache_n, and its connections closing after
// every stream break nothing.
func TestValidateAgainstLlamaCpp(t *testing.T) {
	quiet.Wire(t, func() { testValidateAgainstLlamaCpp(t) })
}

func testValidateAgainstLlamaCpp(t *testing.T) {
	c := newTestClient(t, fakeserver.StartRaw(t, llamaServer()), 5*time.Second, 1)
	v := workload.Voice{SystemPromptTokens: 100, UserTokens: 5, Turns: 3, OutputTokens: 4, Seed: 1}
	got := CheckPrefixCache(context.Background(), c, v)
	if !got.OK || !strings.Contains(got.Verdict, "timings.cache_n") {
		t.Fatalf("validate: %+v", got)
	}
	if got.Turns[1].CachedTokens != 110 || got.Turns[1].CachedSource != "timings" {
		t.Errorf("turn 2 %+v, want 110 cached from timings", got.Turns[1])
	}
}

// TestLlamaCppTimingsInTheResult: the timings of every response are
// summarised in the run's result, next to the client's own figures.
func TestLlamaCppTimingsInTheResult(t *testing.T) {
	quiet.Wire(t, func() { testLlamaCppTimingsInTheResult(t) })
}

func testLlamaCppTimingsInTheResult(t *testing.T) {
	c := newTestClient(t, fakeserver.StartRaw(t, llamaServer()), 5*time.Second, 2)
	res := runAgainst(t, c, driver.Load{Concurrency: 2, Requests: 10, Warmup: 0})
	wantNoFailures(t, "llama.cpp", res, 10)
	tm := res.ServerTimings
	if tm == nil || tm.Requests != 10 || tm.PromptMs.P50 < 31 || tm.PromptMs.P50 > 32 || tm.TPOT.P50 < 19.9 || tm.TPOT.P50 > 20.1 {
		t.Errorf("server timings %+v, want 10 requests, prompt 31.5 ms, TPOT 60/(4−1) = 20 ms", tm)
	}
}

// TestIdleConnectionsAreReused: a connection idle longer than --timeout
// (its last read deadline long past) is still alive and is reused, not
// mistaken for one the server closed.
func TestIdleConnectionsAreReused(t *testing.T) {
	quiet.Wire(t, func() { testIdleConnectionsAreReused(t) })
}

func testIdleConnectionsAreReused(t *testing.T) {
	s := &fakeserver.Raw{Serve: func(w *bufio.Writer, _ *http.Request, _ int) bool {
		fakeserver.WriteSSE(w, 2, "")
		return true
	}}
	url := fakeserver.StartRaw(t, s)
	c, err := transport.NewClient(transport.Target{BaseURL: url, Model: "m", Timeout: 100 * time.Millisecond}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 3; i++ {
		var rec record.Record
		c.Do(&workload.Request{Messages: []workload.Message{{Role: "user", Content: "x"}}}, &rec, false)
		if rec.Class != "" {
			t.Fatalf("request %d: %s %s", i, rec.Class, rec.Message)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if opened, stale, resent := c.ConnStats(); opened != 1 || stale != 0 || resent != 0 {
		t.Errorf("opened %d, stale %d, resent %d; want one connection reused", opened, stale, resent)
	}
}

// runLevel runs a level of requests live with the client c.
func runLevel(ctx context.Context, c *transport.Client, src workload.Source, load driver.Load) (*results.Run, error) {
	return (&Live{Client: c}).Run(ctx, &bench.Level{Work: bench.Requests{Source: src, Load: load}})
}

// TestHostFullStopsTheLevel: an uncapped open loop against a server that
// answers one token and then only comments, for ever. Requests pile up in
// flight; at the most the host holds (40 here) the level stops at once,
// every one cut and counted, the result marked interrupted and a warning
// saying why, instead of growing until the client dies of memory.
func TestHostFullStopsTheLevel(t *testing.T) {
	quiet.Wire(t, func() { testHostFullStopsTheLevel(t) })
}

func testHostFullStopsTheLevel(t *testing.T) {
	url := fakeserver.StartRaw(t, dripServer(200*time.Millisecond, true))
	c := newTestClient(t, url, time.Minute, 100)
	start := time.Now()
	res, err := (&Live{Client: c, MaxInFlight: 40}).Run(context.Background(), &bench.Level{Work: bench.Requests{
		Source: workload.FixedPrompt{Text: "hi", MaxTokens: 3},
		Load:   driver.Load{Rate: 400, Burstiness: 1, Duration: 30 * time.Second, Seed: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	// A bound only against a hang: the window is 30 s.
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %v; the level should stop once 40 are in flight", took)
	}
	if !res.Interrupted || res.Requests.Interrupted < 40 || res.Requests.OK != 0 {
		t.Errorf("interrupted %v, %d cut, %d ok; want the level stopped with at least 40 cut", res.Interrupted, res.Requests.Interrupted, res.Requests.OK)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), ErrHostFull.Error()) {
		t.Errorf("no warning says why it stopped: %q", res.Warnings)
	}
}

// TestIdleLimitFollowsTheContent: fifteen tokens 30 ms apart, then
// silence, under a 300 ms gap limit. The socket's deadline is moved only
// when the one applied fires early, so the first one (300 ms after the
// send) fires mid-stream: the stream must go on, every token read, and
// the request end as an idle timeout no sooner than 300 ms after its
// last token. A host that stalls the server's 30 ms sleeps past the limit
// would end it early, so the run is judged only on a quiet host.
func TestIdleLimitFollowsTheContent(t *testing.T) {
	const tokens, limit = 15, 300 * time.Millisecond
	var rec record.Record
	var ended time.Duration
	quiet.Live(t, 3, func(int) quiet.Try {
		return quiet.During(func() { rec, ended = idleLimitRun(t, tokens, limit) })
	})
	if rec.Class != record.ClassIdleTimeout || rec.Chunks != tokens {
		t.Fatalf("class %q after %d tokens, want idle_timeout after %d", rec.Class, rec.Chunks, tokens)
	}
	if quietFor := ended - rec.LastToken; quietFor < limit || quietFor > limit+time.Second {
		t.Errorf("ended %v after the last token, want %v (no sooner)", quietFor, limit)
	}
}

// idleLimitRun sends one request to a server that streams tokens tokens
// 30 ms apart and then holds the connection, and returns its record and
// when it ended.
func idleLimitRun(t *testing.T, tokens int, limit time.Duration) (record.Record, time.Duration) {
	url := fakeserver.StartRaw(t, &fakeserver.Raw{Serve: func(w *bufio.Writer, _ *http.Request, _ int) bool {
		fmt.Fprint(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		for range tokens {
			s := "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n"
			fmt.Fprintf(w, "%x\r\n%s\r\n", len(s), s)
			if w.Flush() != nil {
				return false
			}
			time.Sleep(30 * time.Millisecond)
		}
		time.Sleep(limit + 1500*time.Millisecond)
		return false
	}})
	c := newTestClient(t, url, limit, 1)
	var rec record.Record
	c.Do(&workload.Request{Messages: []workload.Message{{Role: "user", Content: "x"}}}, &rec, false)
	return rec, c.Now()
}
