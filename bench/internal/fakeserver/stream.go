// Package fakeserver holds the in-test servers the client side's tests
// run against: servers that behave as real ones do on the wire (a known
// token schedule, faults on purpose, connections closed after every
// stream or when idle, HTTP/1.0), on 127.0.0.1 only, each stopped when
// its test ends.
package fakeserver

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"time"

	"github.com/kneebench/knee/simulator/simtest"
)

// Stream is an in-test OpenAI-style server with a known schedule: the
// first token at ttft after the request arrives, then one every itl, all on
// absolute deadlines so timer overshoot never accumulates.
type Stream struct {
	TTFT, ITL time.Duration
	Tokens    int
	// Busy, when set, serialises requests: a slow server that serves one
	// request at a time.
	Busy     chan struct{}
	Requests atomic.Int64
}

// ServeHTTP streams the schedule.
func (s *Stream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	s.Requests.Add(1)
	if s.Busy != nil {
		s.Busy <- struct{}{}
		defer func() { <-s.Busy }()
		arrival = time.Now()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	f := w.(http.Flusher)
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n")
	f.Flush()
	for i := 0; i < s.Tokens; i++ {
		time.Sleep(time.Until(arrival.Add(s.TTFT + time.Duration(i)*s.ITL)))
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%d\"},\"finish_reason\":null}]}\n\n", i)
		f.Flush()
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":%d,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":3}}}\n\n", s.Tokens, s.Tokens+7)
	fmt.Fprint(w, "data: [DONE]\n\n")
	f.Flush()
}

// Start serves h on 127.0.0.1, or on the network of the test's synctest
// bubble when it runs in one (simtest.Run), and returns its base URL.
func Start(t *testing.T, h http.Handler) string {
	t.Helper()
	if n := simtest.Of(t); n != nil {
		return n.ServeHTTP(t, h) + "/v1"
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// ClosedPortURL returns a loopback URL on which nothing listens.
func ClosedPortURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

// Fault answers with the fault kind names: 429, 500, cut (the
// connection closed mid-stream), malformed, silent (headers, then
// nothing for 3 s) or garbage (2 MiB without a line end).
func Fault(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch kind {
		case "429":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`)
		case "500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":{"message":"boom","type":"server_error","param":null,"code":null}}`)
		case "cut":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
			w.(http.Flusher).Flush()
			hj, _, _ := w.(http.Hijacker).Hijack()
			hj.Close()
		case "malformed":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
			fmt.Fprint(w, "this is not sse at all\n\n")
		case "silent":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		case "garbage":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, strings.Repeat("x", 2<<20))
		}
	}
}
