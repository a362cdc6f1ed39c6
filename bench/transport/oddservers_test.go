package transport

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// oddServer answers every request with the given raw HTTP response.
func oddServer(t *testing.T, raw string) string {
	t.Helper()
	return fakeserver.StartRaw(t, &fakeserver.Raw{Serve: func(w *bufio.Writer, _ *http.Request, _ int) bool {
		w.WriteString(raw)
		return false
	}})
}

func sse(events ...string) string {
	body := strings.Join(events, "")
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

func plainJSON(body string) string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

func doOne(t *testing.T, url string) *record.Record {
	t.Helper()
	c := newTestClient(t, url, 5*time.Second, 1)
	rec := &record.Record{}
	c.Do(&workload.Request{Messages: []workload.Message{{Role: "user", Content: "x"}}, MaxTokens: 10}, rec, true)
	return rec
}

// TestOddButLegalServers: what servers nobody here wrote really send.
func TestOddButLegalServers(t *testing.T) {
	quiet.Wire(t, func() { testOddButLegalServers(t) })
}

func testOddButLegalServers(t *testing.T) {
	tok := func(s string) string { return fmt.Sprintf(`{"choices":[{"delta":{"content":%q}}]}`, s) }
	usage := `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`
	cases := []struct {
		name, raw string
		class     string
		chunks    int
		text      string
	}{
		// Proxies add headers; 40 KB of them used to fail every request.
		// Past the 16 KiB a request holds, it is sent again (once, on
		// wider buffers); past 64 KiB it fails, saying why.
		{"80 KB of headers", strings.Replace(sse("data: "+tok("a")+"\n\n", "data: [DONE]\n\n"),
			"Content-Type", "X-Padding: "+strings.Repeat("p", 80000)+"\r\nContent-Type", 1), record.ClassMalformed, 0, ""},
		{"40 KB of headers", strings.Replace(sse("data: "+tok("a")+"\n\n", "data: "+tok("b")+"\n\n", "data: "+usage+"\n\n", "data: [DONE]\n\n"),
			"Content-Type", "X-Padding: "+strings.Repeat("p", 40000)+"\r\nContent-Type", 1), "", 2, "ab"},
		// One event split over several data lines is valid SSE: the lines
		// join with a newline.
		{"multi-line event", sse("data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"a\"}}]}\n\n", "data: "+tok("b")+"\n\n", "data: [DONE]\n\n"), "", 2, "ab"},
		// A server that leaves out the blank lines between events.
		{"no blank lines", sse("data: "+tok("a")+"\n", "data: "+tok("b")+"\n", "data: [DONE]\n"), "", 2, "ab"},
		// SSE comments and CRLF line ends.
		{"comments and CRLF", sse(": ping\r\n\r\n", "data: "+tok("a")+"\r\n\r\n", "event: message\r\ndata: "+tok("b")+"\r\n\r\n", "data: [DONE]\r\n\r\n"), "", 2, "ab"},
		// A plain JSON completion answering a streaming request.
		{"not streamed", plainJSON(`{"choices":[{"message":{"content":"whole answer"}}]}`), record.ClassNotStreamed, 1, "whole answer"},
	}
	for _, tc := range cases {
		rec := doOne(t, oddServer(t, tc.raw))
		if rec.Class != tc.class || rec.Chunks != tc.chunks || string(rec.Text) != tc.text {
			t.Errorf("%s: class %q (%s), %d chunks, text %q; want %q, %d, %q", tc.name, rec.Class, rec.Message, rec.Chunks, rec.Text, tc.class, tc.chunks, tc.text)
		}
	}
}

// TestImplausibleUsageIsFlagged: a completion count above the max_tokens
// asked, or negative, is not summed into throughput.
func TestImplausibleUsageIsFlagged(t *testing.T) {
	quiet.Wire(t, func() { testImplausibleUsageIsFlagged(t) })
}

func testImplausibleUsageIsFlagged(t *testing.T) {
	tok := `data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n"
	for _, u := range []string{`"completion_tokens":1000000`, `"completion_tokens":-5`} {
		rec := doOne(t, oddServer(t, sse(tok, tok, `data: {"choices":[],"usage":{"prompt_tokens":3,`+u+`}}`+"\n\n", "data: [DONE]\n\n")))
		if rec.Class != "" || rec.OutputTokens() != 2 {
			t.Errorf("%s: class %q, output tokens %d; want the 2 chunks counted", u, rec.Class, rec.OutputTokens())
		}
	}
}

// TestImplausiblePromptTokens: a prompt_tokens no request has is not
// believed, and what the server wrote is kept to be named.
func TestImplausiblePromptTokens(t *testing.T) {
	quiet.Wire(t, func() { testImplausiblePromptTokens(t) })
}

func testImplausiblePromptTokens(t *testing.T) {
	tok := `data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n"
	for _, tc := range []struct{ usage, raw string }{
		{`"prompt_tokens":1000000000000`, "1000000000000"},
		{`"prompt_tokens":-5`, "-5"},
		{`"prompt_tokens":"many"`, `"many"`},
		{`"prompt_tokens":12`, ""},
	} {
		rec := doOne(t, oddServer(t, sse(tok, `data: {"choices":[],"usage":{`+tc.usage+`,"completion_tokens":1}}`+"\n\n", "data: [DONE]\n\n")))
		if rec.PromptOdd != tc.raw || (tc.raw != "" && rec.PromptTokens != 0) || (tc.raw == "" && rec.PromptTokens != 12) {
			t.Errorf("%s: prompt tokens %d, odd %q", tc.usage, rec.PromptTokens, rec.PromptOdd)
		}
	}
}

// TestStreamsThatEndWithoutDone: a stream closed after its finish_reason
// finished (and is marked); one closed before it was cut.
func TestStreamsThatEndWithoutDone(t *testing.T) {
	quiet.Wire(t, func() { testStreamsThatEndWithoutDone(t) })
}

func testStreamsThatEndWithoutDone(t *testing.T) {
	tok := `data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n"
	fin := `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	if rec := doOne(t, oddServer(t, sse(tok, fin))); rec.Class != "" || !rec.NoDone {
		t.Errorf("after its finish_reason: class %q, no-done %v", rec.Class, rec.NoDone)
	}
	if rec := doOne(t, oddServer(t, sse(tok, tok))); rec.Class != record.ClassTruncated {
		t.Errorf("before any finish_reason: class %q", rec.Class)
	}
}

// TestRedirectsAreNamed: a 307 is an error that says where it points and
// what to do, not a bare status.
func TestRedirectsAreNamed(t *testing.T) {
	quiet.Wire(t, func() { testRedirectsAreNamed(t) })
}

func testRedirectsAreNamed(t *testing.T) {
	rec := doOne(t, oddServer(t, "HTTP/1.1 307 Temporary Redirect\r\nLocation: https://elsewhere.example/v1/chat/completions\r\nContent-Length: 0\r\n\r\n"))
	if !strings.HasPrefix(rec.Class, "http_307") || !strings.Contains(rec.Message, "https://elsewhere.example") || !strings.Contains(rec.Message, "--base-url") {
		t.Errorf("class %q, message %q", rec.Class, rec.Message)
	}
}
