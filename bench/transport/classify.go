package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/valyala/fasthttp"
)

// retryable reports whether a failure class is worth another attempt: the
// server asked to come back (429, 503) or the connection never carried a
// response.
func retryable(class string) bool {
	return strings.HasPrefix(class, "http_429") || strings.HasPrefix(class, "http_503") ||
		class == record.ClassConnectRefused || class == record.ClassConnectionReset
}

// backoff is the wait before attempt n+1 (n ≥ 1): the server's Retry-After
// when it sent one, else 100 ms doubling per attempt up to 5 s, with ±20%
// jitter so retries do not arrive in lockstep.
func backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := 100 * time.Millisecond << min(n-1, 6)
	d = min(d, 5*time.Second)
	return time.Duration(float64(d) * (0.8 + 0.4*mrand.Float64()))
}

// httpErrorClass names a non-200 answer by status and OpenAI error type.
func httpErrorClass(status int, body []byte) (class, message string) {
	class = "http_" + strconv.Itoa(status)
	msg, typ, ok := errorWords(body)
	if !ok {
		return class, strings.TrimSpace(string(body[:min(len(body), 200)]))
	}
	if typ != "" {
		class += ":" + typ
	}
	return class, msg
}

// errorWords reads the server's sentence and its error type from an error
// body in the shapes servers write: OpenAI's, Anthropic's, vLLM's and
// llama.cpp's {"error": {"message", "type"}}; older vLLM's flat
// {"object": "error", "message", "type"}; TGI's {"error": "…",
// "error_type"}; FastAPI's {"detail": "…"}.
func errorWords(body []byte) (message, typ string, ok bool) {
	var e struct {
		Error     json.RawMessage `json:"error"`
		Message   string          `json:"message"`
		Type      string          `json:"type"`
		ErrorType string          `json:"error_type"`
		Detail    json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", "", false
	}
	var nested struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	var text string
	switch {
	case json.Unmarshal(e.Error, &nested) == nil && (nested.Message != "" || nested.Type != ""):
		return nested.Message, nested.Type, true
	case json.Unmarshal(e.Error, &text) == nil && text != "":
		return text, e.ErrorType, true
	case e.Message != "":
		if e.Type == "error" { // Anthropic names the envelope so
			e.Type = ""
		}
		return e.Message, e.Type, true
	case json.Unmarshal(e.Detail, &text) == nil && text != "":
		return text, "", true
	}
	return "", "", false
}

// redirectText says what a redirect means for a benchmark: knee does not
// follow one, since every request would then be timed through a detour.
func redirectText(status int, location string) string {
	return fmt.Sprintf("HTTP %d: the server redirects to %s; knee does not follow redirects (each request would be timed through the detour): give the URL it redirects to as --base-url", status, location)
}

// closedUnanswered reports whether a failed exchange went out on a reused
// connection that the server closed before answering a single byte: the
// keep-alive race, not a failure of the request.
func (c *Client) closedUnanswered(resp *fasthttp.Response, err error) bool {
	if c.dialer.aborted.Load() {
		return false
	}
	tc := connOf(resp.LocalAddr())
	if tc == nil || !tc.reusedNoAnswer() {
		return false
	}
	return errors.Is(err, fasthttp.ErrConnectionClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// classifyAt is classify for a request sent at sent: a timeout that
// struck when the request's total time ran out is a request timeout.
func (c *Client) classifyAt(err error, afterContent bool, sent time.Duration) string {
	class := c.classify(err, afterContent)
	if (class == record.ClassIdleTimeout || class == record.ClassFirstTokenTimeout) && c.t.RequestTimeout > 0 &&
		c.Now()-sent >= c.t.RequestTimeout-time.Millisecond {
		return record.ClassRequestTimeout
	}
	return class
}

// classify maps a transport error to a class. afterContent tells a stall in
// the middle of a stream from a wait for the first token.
func (c *Client) classify(err error, afterContent bool) string {
	if c.dialer.aborted.Load() {
		return record.ClassInterrupted
	}
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return record.ClassClientSaturated
	case errors.Is(err, syscall.ECONNREFUSED):
		return record.ClassConnectRefused
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, fasthttp.ErrTimeout),
		errors.As(err, &ne) && ne.Timeout():
		if afterContent {
			return record.ClassIdleTimeout
		}
		return record.ClassFirstTokenTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, fasthttp.ErrConnectionClosed):
		if afterContent {
			return record.ClassTruncated
		}
		return record.ClassConnectionReset
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		if afterContent {
			return record.ClassTruncated
		}
		return record.ClassConnectionReset
	case headersTooLong(err):
		return record.ClassMalformed
	case strings.Contains(err.Error(), "malformed") || strings.Contains(err.Error(), "cannot parse"):
		return record.ClassMalformed
	}
	return record.ClassOther
}

// headersTooLong reports whether err is fasthttp's for response headers
// longer than the read buffer (its error type neither unwraps nor is
// always kept through the wrapping).
func headersTooLong(err error) bool {
	var small *fasthttp.ErrSmallBuffer
	return errors.As(err, &small) || errors.Is(err, fasthttp.ErrSmallReadBuffer) || strings.Contains(err.Error(), "small read buffer")
}
