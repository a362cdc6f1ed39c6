package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
)

// heldBody opens a connection that announces a body of n bytes, sends
// its first 16 KiB and holds the rest, as a slow client uploading a large
// prompt does; the returned reader reads the answer when there is one.
func heldBody(t *testing.T, addr string, n int) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{%s", n, strings.Repeat(" ", 16<<10))
	return conn, bufio.NewReader(conn)
}

// TestBodiesInFlightAreBounded: while the bodies being read reach the
// server's bound, a further large one is answered 503 with Retry-After
// (its body read into nothing for a moment, then the connection closed)
// instead of read into memory
// (16 bodies of 30 MB at once killed knee sim); small requests are still
// served, and once the held bodies go, large ones are read again.
func TestBodiesInFlightAreBounded(t *testing.T) {
	quiet.Wire(t, func() { testBodiesInFlightAreBounded(t) })
}

func testBodiesInFlightAreBounded(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	// Set before any request: the handlers read them.
	const whole = 8 << 20 // more than the sockets' buffers hold
	ts.Server.opts.MaxBodyBytesInFlight, ts.Server.opts.MaxBodyBytes = 2<<20, 2*whole
	addr := strings.TrimPrefix(ts.URL, "http://")
	const big = 900 << 10
	a, _ := heldBody(t, addr, big)
	b, _ := heldBody(t, addr, big)
	waitFor(t, func() bool { return ts.Server.bodies.Load() == 2*big })
	_, r := heldBody(t, addr, big)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !resp.Close {
		t.Fatalf("a third large body: %d (Retry-After %q, close %v) %s, want 503 with Retry-After, the connection closed", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close, body)
	}
	// One sent whole reads its refusal, not a reset: its body is read
	// into nothing before the answer.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	wrote := make(chan error, 1)
	go func() {
		_, err := fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{%s}",
			whole, strings.Repeat(" ", whole-2))
		wrote <- err
	}()
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || resp.StatusCode != 503 {
		t.Fatalf("a large body sent whole while the bound is full: %v %v, want its 503", resp, err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("sending a large body while the bound is full: %v, want it taken and refused", err)
	}
	if status, body := post(t, ts.URL+"/v1/chat/completions", `{"model":"instant","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`); status != 200 {
		t.Fatalf("a small request while the bodies are held: %d %s", status, body)
	}
	a.Close()
	b.Close()
	waitFor(t, func() bool { return ts.Server.bodies.Load() == 0 })
	// Read and judged on its content: longer than the model's context.
	prompt := strings.Repeat("word ", (big-200)/5)
	if status, body := post(t, ts.URL+"/v1/chat/completions", `{"model":"instant","messages":[{"role":"user","content":"`+prompt+`"}],"max_tokens":2}`); status != 400 || !strings.Contains(string(body), "context") {
		t.Fatalf("a large request once the held ones went: %d %.200s, want it read (400: past the context)", status, body)
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
