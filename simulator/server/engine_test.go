package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/valyala/fasthttp"
)

// scriptedEngine emits tokens at once with a given pattern of More flags.
type scriptedEngine struct {
	Instant
	more string // one letter per token: M = More, - = not
}

func (e scriptedEngine) Stream(_ context.Context, plan *Plan, _ time.Time, emit func(TokenEvent) error) (StreamInfo, error) {
	for i := range plan.Tokens {
		if err := emit(TokenEvent{Index: i, More: e.more[i] == 'M'}); err != nil {
			return StreamInfo{}, err
		}
	}
	return StreamInfo{}, nil
}

// writeLog records each write reaching the connection side of the stream's
// buffer: one per flush.
type writeLog struct{ writes []string }

func (l *writeLog) Write(p []byte) (int, error) {
	l.writes = append(l.writes, string(p))
	return len(p), nil
}

func (l *writeLog) send(f []byte) error {
	_, err := l.Write(f[chunkRoom:])
	return err
}

// TestStreamWritesFollowMore checks that the stream flushes after a token
// unless the engine says what follows is already due, and that grouping
// never changes the bytes sent.
func TestStreamWritesFollowMore(t *testing.T) {
	t.Parallel()
	inBubble(t, testStreamWritesFollowMore)
}

func testStreamWritesFollowMore(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	m := ts.models["instant"]
	orig := m.engine
	t.Cleanup(func() { m.engine = orig })
	tests := []struct {
		more   string
		writes int
	}{
		{"----", 6}, // role, four tokens, finish + usage + [DONE]
		{"MMMM", 2}, // role, then everything else together
		{"-M-M", 4}, // role, token 0, tokens 1-2, token 3 with the finish
	}
	var first string
	for _, tt := range tests {
		m.engine = scriptedEngine{more: tt.more}
		r := &run{s: ts.Server, h: handlers["chat"], m: m, chat: true, model: "instant", id: 7, includeUsage: true,
			arrival: time.Now(), plan: &Plan{PromptTokens: 8, Tokens: []string{"a", " b", "\"c", "\n"}, FinishReason: "length"}}
		var log writeLog
		r.stream(log.send)
		if len(log.writes) != tt.writes {
			t.Errorf("More %s: %d writes, want %d: %q", tt.more, len(log.writes), tt.writes, log.writes)
		}
		all := strings.Join(log.writes, "")
		if first == "" {
			first = all
		} else if all != first {
			t.Errorf("More %s changed the bytes:\n%s\nwant\n%s", tt.more, all, first)
		}
		if got := strings.Count(all, "data: "); got != 8 {
			t.Errorf("More %s: %d events, want 8 (role, 4 tokens, finish, usage, [DONE])", tt.more, got)
		}
	}
}

// TestStallFlushesHeldTokens checks that a stall never traps tokens the
// engine released early for grouping: everything before the stall is on
// the wire before the stall begins.
func TestStallFlushesHeldTokens(t *testing.T) {
	t.Parallel()
	inBubble(t, testStallFlushesHeldTokens)
}

func testStallFlushesHeldTokens(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	m := ts.models["instant"]
	orig := m.engine
	t.Cleanup(func() { m.engine = orig })
	m.engine = scriptedEngine{more: "MMMM"}
	var log writeLog
	r := &run{s: ts.Server, h: handlers["chat"], m: m, chat: true, model: "instant", id: 7, arrival: time.Now(),
		fault: &FaultRule{Kind: FaultStall, AfterTokens: 2, DurationMs: 1},
		plan:  &Plan{PromptTokens: 8, Tokens: []string{"a", "b", "c", "d"}, FinishReason: "length"}}
	r.stream(log.send)
	// Role; tokens 0-1 flushed by the stall; tokens 2-3 with the finish.
	if len(log.writes) != 3 || strings.Count(log.writes[1], "data: ") != 2 {
		t.Errorf("writes %q, want the role, then tokens 0-1 before the stall, then the rest", log.writes)
	}
}

// TestStreamBodyWrites checks the three ways fasthttp may consume a
// streamed body: WriteTo (one write per flush), Read (through a pipe) and
// Close without either (the answer is recorded as aborted). Each runs the
// answer once and calls done once.
func TestStreamBodyWrites(t *testing.T) {
	answer := func(send sendFunc) {
		for _, part := range []string{"one ", "two ", "three"} {
			if send(append(make([]byte, chunkRoom), part...)) != nil {
				return
			}
		}
	}
	t.Run("WriteTo", func(t *testing.T) {
		dones := 0
		var log writeLog
		n, err := newStreamBody(answer, func() { dones++ }, nil).WriteTo(&log)
		if err != nil || n != 13 || dones != 1 {
			t.Fatalf("WriteTo: n %d, err %v, done %d times; want 13, nil, 1", n, err, dones)
		}
		if want := []string{"one ", "two ", "three"}; !slices.Equal(log.writes, want) {
			t.Errorf("writes %q, want %q: one per send", log.writes, want)
		}
	})
	t.Run("Read", func(t *testing.T) {
		var dones atomic.Int32
		b := newStreamBody(answer, func() { dones.Add(1) }, nil)
		got, err := io.ReadAll(b)
		if err != nil || string(got) != "one two three" {
			t.Fatalf("ReadAll: %q, %v", got, err)
		}
		_ = b.Close()
		if dones.Load() != 1 {
			t.Errorf("done called %d times, want 1", dones.Load())
		}
	})
	t.Run("Close unsent", func(t *testing.T) {
		dones, flushErr := 0, error(nil)
		b := newStreamBody(func(send sendFunc) {
			flushErr = send(append(make([]byte, chunkRoom), "role chunk"...))
		}, func() { dones++ }, nil)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if flushErr == nil || dones != 1 {
			t.Errorf("flush error %v, done %d times; want an error (the client is gone) and 1", flushErr, dones)
		}
	})
}

// TestAnswersOnTheWire checks, on a real connection, that an instant
// answer (role, tokens, finish, usage, [DONE]) leaves as one HTTP chunk and
// a fixed_rate answer as one chunk per token after the role chunk.
func TestAnswersOnTheWire(t *testing.T) {
	quiet.Wire(t, func() { testAnswersOnTheWire(t) })
}

func testAnswersOnTheWire(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	const req = `{"model":%q,"max_tokens":5,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello"}]}`
	instant := rawChunks(t, ts.URL, fmt.Sprintf(req, "instant"))
	if len(instant) != 1 || strings.Count(instant[0], "data: ") != 9 {
		t.Errorf("instant: %d chunks, want 1 holding all 9 events: %q", len(instant), instant)
	}
	fixed := rawChunks(t, ts.URL, fmt.Sprintf(req, "fixed"))
	// Role; tokens 0-3 one by one; token 4 with finish, usage and [DONE].
	// Tokens are 10 ms apart: two share a chunk only if one left 10 ms late.
	if len(fixed) != 6 {
		if lag := summaryOf(t, ts, "fixed").Lag.Max; lag < 0.010 {
			t.Errorf("fixed_rate: %d chunks, want 6 (largest token lag %.1f ms): %q", len(fixed), lag*1e3, fixed)
		}
	}
}

// rawChunks posts body to /v1/chat/completions over a plain TCP connection
// and returns the response body's HTTP chunks as framed on the wire.
func rawChunks(t *testing.T, baseURL, body string) []string {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(baseURL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	r := bufio.NewReader(c)
	chunked := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading headers: %v", err)
		}
		chunked = chunked || strings.EqualFold(strings.TrimSpace(line), "Transfer-Encoding: chunked")
		if line == "\r\n" {
			break
		}
	}
	if !chunked {
		t.Fatal("the response is not chunked")
	}
	var chunks []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a chunk size: %v", err)
		}
		size, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("bad chunk size line %q", line)
		}
		if size == 0 {
			return chunks
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatalf("reading a chunk: %v", err)
		}
		chunks = append(chunks, string(buf[:size]))
	}
}

// logConn is a connection that logs what is written to it.
type logConn struct {
	net.Conn
	mu     sync.Mutex
	writes []string
}

func (c *logConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, string(p))
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// TestFasthttpChunkFramer checks, against the fasthttp in go.mod, what
// streamBody's own chunk framing assumes: fasthttp hands WriteTo its chunk
// framer, which flushes each write, so after the first send the answer may
// write framed chunks to the connection itself. The bytes on the wire must
// be exactly those fasthttp would have sent.
func TestFasthttpChunkFramer(t *testing.T) {
	quiet.Wire(t, func() { testFasthttpChunkFramer(t) })
}

func testFasthttpChunkFramer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan *logConn, 1)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		conn := &logConn{Conn: ctx.Conn()}
		conns <- conn
		ctx.SetBodyStream(newStreamBody(func(send sendFunc) {
			for _, part := range []string{"one ", "two ", "three"} {
				if send(append(make([]byte, chunkRoom), part...)) != nil {
					return
				}
			}
		}, func() {}, conn), -1)
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
	raw, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(raw), "\r\n\r\n")
	if want := "4\r\none \r\n4\r\ntwo \r\n5\r\nthree\r\n0\r\n\r\n"; body != want {
		t.Errorf("body on the wire %q, want %q", body, want)
	}
	conn := <-conns
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if want := []string{"4\r\ntwo \r\n", "5\r\nthree\r\n"}; !slices.Equal(conn.writes, want) {
		t.Errorf("written by the answer itself: %q, want %q (is %s still fasthttp's chunk framer?)", conn.writes, want, chunkFramer)
	}
}

// TestFrameChunk checks the in-place chunk framing against the HTTP/1.1
// chunk syntax, at the edges of each hex digit count.
func TestFrameChunk(t *testing.T) {
	for _, n := range []int{1, 15, 16, 255, 256, 4095, 4096, 1<<20 - 1, 1 << 20} {
		data := strings.Repeat("x", n)
		f := append(make([]byte, chunkRoom), data...)
		if got, want := string(frameChunk(f)), fmt.Sprintf("%x\r\n%s\r\n", n, data); got != want {
			t.Errorf("%d bytes: framed %q..., want %q...", n, got[:min(len(got), 12)], want[:min(len(want), 12)])
		}
	}
}
