package live

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/simtest"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

func newTestClient(t *testing.T, url string, timeout time.Duration, conns int) *transport.Client {
	t.Helper()
	tg := transport.Target{BaseURL: url, Model: "m", Timeout: timeout}
	if n := simtest.Of(t); n != nil {
		tg.Network = n.Dial
	}
	c, err := transport.NewClient(tg, conns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func within(t *testing.T, name string, got, lo, hi float64) {
	t.Helper()
	if got < lo || got > hi || math.IsNaN(got) {
		t.Errorf("%s = %.3f, want within [%.3f, %.3f]", name, got, lo, hi)
	}
}

// TestTimingMatchesServerSchedule checks every latency against a server
// whose schedule is known: first token 50 ms after arrival, then one every
// 5 ms for 20 tokens. The server sleeps to absolute deadlines, so its
// tokens leave at most ~1–2 ms late (Go timers round to the millisecond on
// Linux); loopback delivery and parsing add well under a millisecond. A
// tolerance of +8 ms on one-off times and ±1.5 ms on per-token medians covers
// that on a busy 2-core machine while still catching a wrong definition
// (e.g. TTFT stamped at the headers, which would read ~0 ms).
func TestTimingMatchesServerSchedule(t *testing.T) {
	srv := &fakeserver.Stream{TTFT: 50 * time.Millisecond, ITL: 5 * time.Millisecond, Tokens: 20}
	url := fakeserver.Start(t, srv)
	res := liveRetry(t, func() (*results.Run, error) {
		return runLevel(context.Background(), newTestClient(t, url, 5*time.Second, 4), workload.FixedPrompt{Text: "hi", MaxTokens: 20},
			driver.Load{Concurrency: 4, Requests: 40, Warmup: -1})
	})
	if res.Requests.OK != 40 || res.Requests.Failed != 0 {
		t.Fatalf("ok=%d failed=%d errors=%v, want 40 ok", res.Requests.OK, res.Requests.Failed, res.Requests.Errors)
	}
	if res.Requests.Warmup != 4 {
		t.Errorf("warmup = %d, want 4 (one per stream)", res.Requests.Warmup)
	}
	s := res.Stats
	within(t, "TTFT p50 ms", s.TTFT.P50, 50, 58)
	within(t, "ITL p50 ms", s.ITL.P50, 3.5, 6.5)
	within(t, "TPOT p50 ms", s.TPOT.P50, 4.5, 5.5)
	within(t, "E2E p50 ms", s.E2E.P50, 145, 153)
	// A closed loop's queue wait is the client's own hand-off from a
	// stream's last answer to its next send: 2 ms at most on a quiet
	// host, and never past the send lateness the client judged itself by
	// (a noisy verdict says latencies carry that much jitter). Counted
	// from the wrong instant it would read 50 ms or more.
	within(t, "queue wait p99 ms (closed loop)", s.QueueWait.P99, 0, max(2, res.Arrivals.SendLatenessP99Ms))
	if s.ITL.Count != 40*19 {
		t.Errorf("ITL samples = %d, want %d (19 gaps per request)", s.ITL.Count, 40*19)
	}
	if res.Tokens.OutputTotal != 800 || res.Tokens.InputTotal != 280 || res.Tokens.CachedTotal != 120 {
		t.Errorf("tokens out=%d in=%d cached=%d, want 800/280/120", res.Tokens.OutputTotal, res.Tokens.InputTotal, res.Tokens.CachedTotal)
	}
	if !res.Tokens.CachedReported {
		t.Error("cached tokens were reported but not noticed")
	}
}

// TestCoordinatedOmission offers 20 requests/s to a server that serves one
// request at a time in ~100 ms (capacity 10/s) with one slot: the backlog
// grows by about 10 requests a second, so the waits (and TTFT measured from
// the schedule) grow with it while TTFT from the send stays at the server's
// 40 ms.
func TestCoordinatedOmission(t *testing.T) {
	t.Parallel()
	inBubble(t, testCoordinatedOmission)
}

func testCoordinatedOmission(t *testing.T) {
	srv := &fakeserver.Stream{TTFT: 40 * time.Millisecond, ITL: 3 * time.Millisecond, Tokens: 20, Busy: make(chan struct{}, 1)}
	url := fakeserver.Start(t, srv)
	res, err := runLevel(context.Background(), newTestClient(t, url, 10*time.Second, 1), workload.FixedPrompt{Text: "hi", MaxTokens: 20},
		driver.Load{Rate: 20, Burstiness: 1, MaxConcurrency: 1, Requests: 20, Warmup: 0, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Stats
	// From the send, TTFT is the server's 40 ms plus the client's own
	// delays; a measurement that let the queue in would carry the backlog,
	// which reaches 500 ms and more. The bound is a share of that backlog
	// rather than a fixed number of milliseconds, so a busy machine, which
	// stretches both, does not fail the test.
	if s.TTFT.P99 < 39 || s.TTFT.P99 > 0.2*s.QueueWait.Max {
		t.Errorf("TTFT from send p99 %.1f ms, want 39 ms to a fifth of the largest queue wait (%.1f ms)", s.TTFT.P99, s.QueueWait.Max)
	}
	if s.TTFTSched.P99 < 5*s.TTFT.P99 {
		t.Errorf("TTFT sched p99 %.1f ms should dwarf TTFT p99 %.1f ms under a backlog", s.TTFTSched.P99, s.TTFT.P99)
	}
	if s.QueueWait.Max < 500 {
		t.Errorf("queue wait max %.1f ms, want the backlog to reach at least 500 ms", s.QueueWait.Max)
	}
	if res.Arrivals.Waited < 10 {
		t.Errorf("waited = %d, want most arrivals to wait for the slot", res.Arrivals.Waited)
	}
	if s.E2ESched.P50 <= s.E2E.P50 {
		t.Errorf("E2E sched p50 %.1f should exceed E2E p50 %.1f", s.E2ESched.P50, s.E2E.P50)
	}
}

// TestFaultsAreClassified runs one short load per fault and checks that
// each fault lands in its own class and the run still completes.
func TestFaultsAreClassified(t *testing.T) {
	quiet.Wire(t, func() { testFaultsAreClassified(t) })
}

func testFaultsAreClassified(t *testing.T) {
	cases := []struct {
		kind, class string
	}{
		{"429", "http_429:rate_limit_error"},
		{"500", "http_500:server_error"},
		{"cut", record.ClassTruncated},
		{"malformed", record.ClassMalformed},
		{"silent", record.ClassFirstTokenTimeout},
		{"garbage", record.ClassMalformed},
		{"refused", record.ClassConnectRefused},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			url := ""
			if tc.kind == "refused" {
				url = fakeserver.ClosedPortURL(t)
			} else {
				url = fakeserver.Start(t, fakeserver.Fault(tc.kind))
			}
			res, err := runLevel(context.Background(), newTestClient(t, url, 300*time.Millisecond, 2), workload.FixedPrompt{Text: "hi", MaxTokens: 4}, driver.Load{Concurrency: 2, Requests: 4, Warmup: 0})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests.Sent != 4 || res.Requests.Errors[tc.class] != 4 || res.Requests.OK != 0 {
				t.Errorf("sent=%d ok=%d errors=%v, want 4 × %s", res.Requests.Sent, res.Requests.OK, res.Requests.Errors, tc.class)
			}
		})
	}
}

func TestInterruptKeepsMeasurements(t *testing.T) {
	t.Parallel()
	inBubble(t, testInterruptKeepsMeasurements)
}

func testInterruptKeepsMeasurements(t *testing.T) {
	srv := &fakeserver.Stream{TTFT: 10 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 200}
	url := fakeserver.Start(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := runLevel(ctx, newTestClient(t, url, 5*time.Second, 2), workload.FixedPrompt{Text: "hi"}, driver.Load{Concurrency: 2, Duration: time.Minute, Warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("interrupt took %v to stop the run", time.Since(start))
	}
	if !res.Interrupted || res.Requests.Interrupted == 0 || res.Requests.Failed != 0 {
		t.Errorf("interrupted=%v requests=%+v, want interrupted requests and no failures", res.Interrupted, res.Requests)
	}
}

func TestLoadValidate(t *testing.T) {
	bad := []driver.Load{
		{},
		{Concurrency: 1, Rate: 1, Requests: 1, Burstiness: 1},
		{Concurrency: 1},
		{Rate: 1, Requests: 1},
		{Concurrency: -1, Requests: 1},
	}
	for i, l := range bad {
		if l.Validate() == nil {
			t.Errorf("%d: %+v validated, want an error", i, l)
		}
	}
	if err := (driver.Load{Rate: 2, Burstiness: 1, Requests: 3}).Validate(); err != nil {
		t.Errorf("good load rejected: %v", err)
	}
}

var _ workload.Source = workload.FixedPrompt{}
var _ = results.SchemaVersion

func TestDiagnose(t *testing.T) {
	warm := results.ValidationTurn{Turn: 1, PromptTokens: 18100, CachedReported: true}
	cases := []struct {
		name  string
		turn2 results.ValidationTurn
		ok    bool
		want  string
	}{
		{"hit", results.ValidationTurn{Turn: 2, PromptTokens: 18250, CachedTokens: 18096, CachedReported: true}, true, "OK: turn 2 reused the warm prefix (cached 18,096 of 18,250 prompt tokens)"},
		{"missing", results.ValidationTurn{Turn: 2, PromptTokens: 18250}, false, "does not report cached tokens"},
		{"too low", results.ValidationTurn{Turn: 2, PromptTokens: 18250, CachedTokens: 4000, CachedReported: true}, false, "cached 4,000 of 18,250"},
		{"error", results.ValidationTurn{Turn: 2, Error: "http_503:server_error", Message: "overloaded"}, false, "turn 2 failed (http_503:server_error)"},
	}
	for _, tc := range cases {
		v := Diagnose([]results.ValidationTurn{warm, tc.turn2}, 18000, "usage.prompt_tokens_details.cached_tokens")
		if v.OK != tc.ok || !strings.Contains(v.Verdict, tc.want) {
			t.Errorf("%s: ok=%v verdict %q, want %v and %q", tc.name, v.OK, v.Verdict, tc.ok, tc.want)
		}
		if !tc.ok && v.Diagnosis == "" {
			t.Errorf("%s: no diagnosis", tc.name)
		}
	}
	// A server that does not report names the field of the kind sent.
	for _, k := range kind.All() {
		if !k.Streamed {
			continue
		}
		v := Diagnose([]results.ValidationTurn{warm, {Turn: 2, PromptTokens: 18250}}, 18000, k.Cached)
		if k.Cached == "" || !strings.HasPrefix(v.Diagnosis, k.Cached+" is missing") {
			t.Errorf("%s: %q names no field of its own", k.Name, v.Diagnosis)
		}
	}
}

// TestMultiTokenChunks: a server that packs two tokens into each chunk gets
// a warning, and output tokens come from usage, not from the chunk count.
func TestMultiTokenChunks(t *testing.T) {
	quiet.Wire(t, func() { testMultiTokenChunks(t) })
}

func testMultiTokenChunks(t *testing.T) {
	url := fakeserver.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 5; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\" a b\"}}]}\n\n")
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":10}}\n\ndata: [DONE]\n\n")
	}))
	res, err := runLevel(context.Background(), newTestClient(t, url, time.Second, 1), workload.FixedPrompt{Text: "hi", MaxTokens: 10}, driver.Load{Concurrency: 1, Requests: 3, Warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tokens.OutputTotal != 30 || res.Tokens.MultiTokenChunks != 3 {
		t.Errorf("output tokens %d, multi-token responses %d; want 30 from usage and 3", res.Tokens.OutputTotal, res.Tokens.MultiTokenChunks)
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "several tokens into one chunk") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// liveRetry runs a live level, measuring again when knee judged its
// client starved, and skips the test when every try was (quiet.Live).
func liveRetry(t *testing.T, run func() (*results.Run, error)) *results.Run {
	t.Helper()
	var res *results.Run
	quiet.Live(t, 2, func(int) quiet.Try {
		var err error
		if res, err = run(); err != nil {
			t.Fatal(err)
		}
		return quiet.Try{Verdict: res.Health.Verdict, Reasons: res.Health.Reasons}
	})
	return res
}

// inBubble runs f in a synctest bubble (simtest.Run): fakeserver.Start
// serves on its in-memory network and newTestClient dials through it, so
// a load of seconds takes no wall time and its timing is exact.
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	simtest.Run(t, func(t *testing.T, _ *simtest.Net) { f(t) })
}
