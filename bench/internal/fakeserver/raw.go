package fakeserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Raw is a loopback HTTP/1.1 server written on bare TCP, so a test
// can behave exactly as a real server does on the wire: close a
// kept-alive connection right after a stream (llama.cpp's server), close
// idle connections (uvicorn), answer HTTP/1.0, or never finish. serve
// handles the n-th request (from 1) of a connection and says whether the
// connection stays open for another.
type Raw struct {
	ln      net.Listener
	Accepts atomic.Int64
	wg      sync.WaitGroup
	// IdleClose, when set, closes a connection that waits longer than this
	// for its next request.
	IdleClose time.Duration
	Serve     func(w *bufio.Writer, r *http.Request, n int) (keep bool)
	mu        sync.Mutex
	conns     map[net.Conn]struct{}
}

// StartRaw serves s on 127.0.0.1 until the test ends and returns its base
// URL.
func StartRaw(t *testing.T, s *Raw) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln, s.conns = ln, map[net.Conn]struct{}{}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.Accepts.Add(1)
			s.mu.Lock()
			s.conns[c] = struct{}{}
			s.mu.Unlock()
			s.wg.Add(1)
			go s.handle(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/v1"
}

func (s *Raw) handle(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	br, bw := bufio.NewReader(c), bufio.NewWriter(c)
	for n := 1; ; n++ {
		if s.IdleClose > 0 {
			_ = c.SetReadDeadline(time.Now().Add(s.IdleClose))
		}
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		// The body is read whole and handed on, for a test that looks at it.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		keep := s.Serve(bw, r, n)
		_ = bw.Flush()
		if !keep {
			return
		}
	}
}

// WriteSSE writes a complete chunked SSE answer of tokens tokens, the
// usage chunk and [DONE], with the given extra response headers.
func WriteSSE(w *bufio.Writer, tokens int, headers string) {
	fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n%s\r\n", headers)
	chunk := func(s string) { fmt.Fprintf(w, "%x\r\n%s\r\n", len(s), s) }
	for i := 0; i < tokens; i++ {
		chunk(fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" t%d\"},\"finish_reason\":null}]}\n\n", i))
	}
	chunk(fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":%d}}\n\n", tokens))
	chunk("data: [DONE]\n\n")
	fmt.Fprint(w, "0\r\n\r\n")
}
