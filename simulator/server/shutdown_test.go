package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
)

// TestShutdownDeadline: a stream that would run for 10 s does not hold up
// a graceful shutdown with a 300 ms grace.
func TestShutdownDeadline(t *testing.T) {
	quiet.Wire(t, func() { testShutdownDeadline(t) })
}

func testShutdownDeadline(t *testing.T) {
	url, cancel, done := runUntilCancel(t, 300*time.Millisecond)
	go func() {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"fixed","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"x"}]}`))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not finish")
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("shutdown took %v with a 300 ms grace", el)
	}
}

// TestShutdownDrains: a stream that ends within the grace period finishes
// normally, with [DONE], while the server shuts down.
func TestShutdownDrains(t *testing.T) {
	quiet.Wire(t, func() { testShutdownDrains(t) })
}

func testShutdownDrains(t *testing.T) {
	url, cancel, done := runUntilCancel(t, 3*time.Second)
	got := make(chan string, 1)
	go func() {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"fixed","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	time.Sleep(100 * time.Millisecond) // the stream has started (50 tokens take ~0.5 s)
	cancel()
	select {
	case body := <-got:
		if !strings.HasSuffix(body, "data: [DONE]\n\n") {
			t.Errorf("the stream did not finish during the drain: %.200q", body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream never finished")
	}
	<-done
}

// runUntilCancel serves the test models with Run, as knee sim does, until
// cancel is called; done receives Run's result.
func runUntilCancel(t *testing.T, grace time.Duration) (url string, cancel func(), done <-chan error) {
	t.Helper()
	mf, err := ParseModels("m", []byte(testModels))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := loadBuiltinResponses("bench-responses")
	ctx, stop := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, "127.0.0.1:0", Options{Models: mf, Responder: r}, grace, func(a net.Addr) { addr <- a.String() })
	}()
	return "http://" + <-addr, stop, errc
}
