package server

import (
	"fmt"
	"io"
	"time"

	"github.com/valyala/fasthttp"
)

// smallBody is the body size that is always admitted: a request this
// small costs the server less to read than to refuse.
const smallBody = 64 << 10

// admitBody decides, from a POST's headers and before its body is read,
// whether the server reads it: a body over MaxBodyBytes is refused with
// 413, and one that would take the bodies being read and decoded past
// MaxBodyBytesInFlight with 503 and Retry-After, as a server out of
// memory for them would rather answer than die (16 bodies of 30 MB at
// once once killed knee sim, some 85 MB each). The 503's body is read
// into nothing first, so its client reads the answer, not a reset; a
// 413's, over the limit, is not read, and its connection is closed. An admitted body's
// bytes are held until release is called, when the request has been
// answered.
func (s *Server) admitBody(ctx *fasthttp.RequestCtx) (release func(), ok bool) {
	n := int64(ctx.Request.Header.ContentLength())
	if n < 0 {
		// Chunked: its size is unknown until read; hold the most it may be.
		n = int64(s.opts.MaxBodyBytes)
	}
	if n > int64(s.opts.MaxBodyBytes) {
		ctx.SetConnectionClose()
		writeError(ctx, &APIError{Status: 413, Type: "invalid_request_error", Code: "request_too_large",
			Message: fmt.Sprintf("request body exceeds the %d-byte limit", s.opts.MaxBodyBytes)})
		return nil, false
	}
	if n <= smallBody {
		return func() {}, readBody(ctx, s.opts.MaxBodyBytes)
	}
	if s.bodies.Add(n) > int64(s.opts.MaxBodyBytesInFlight) {
		s.bodies.Add(-n)
		// The body is read and thrown away, holding no memory, so the
		// client reads the refusal rather than a reset of a connection
		// closed under its unsent body.
		if ctx.Request.IsBodyStream() {
			// Within a moment: a client holding its body back is not
			// waited for, and may see its connection reset.
			_ = ctx.Conn().SetReadDeadline(time.Now().Add(drainWithin))
			_, _ = io.Copy(io.Discard, io.LimitReader(ctx.RequestBodyStream(), n))
		}
		ctx.SetConnectionClose()
		ctx.Response.Header.Set("Retry-After", "1")
		writeError(ctx, &APIError{Status: 503, Type: "server_error", Code: "service_unavailable",
			Message: fmt.Sprintf("the server is reading %d MiB of request bodies already (its limit %d MiB): retry shortly", s.bodies.Load()>>20, s.opts.MaxBodyBytesInFlight>>20)})
		return nil, false
	}
	release = func() { s.bodies.Add(-n) }
	if !readBody(ctx, s.opts.MaxBodyBytes) {
		release()
		return nil, false
	}
	return release, true
}

// drainWithin bounds the reading of a refused body into nothing.
const drainWithin = time.Second

// readBody reads a streamed request body of at most limit bytes into the
// request, where handlers read it; a body that does not arrive or runs
// past the limit is answered (400, 413) and false returned.
func readBody(ctx *fasthttp.RequestCtx, limit int) bool {
	if !ctx.Request.IsBodyStream() {
		return true
	}
	var b []byte
	var err error
	if n := ctx.Request.Header.ContentLength(); n >= 0 && n <= limit {
		// One allocation of the announced size (most bodies are already in
		// fasthttp's buffer: it reads 8 KiB before the handler).
		b = make([]byte, n)
		_, err = io.ReadFull(ctx.RequestBodyStream(), b)
	} else {
		b, err = io.ReadAll(io.LimitReader(ctx.RequestBodyStream(), int64(limit)+1))
	}
	switch {
	case err != nil:
		ctx.SetConnectionClose()
		writeError(ctx, &APIError{Status: 400, Type: "invalid_request_error", Message: "the request body did not arrive whole: " + err.Error()})
		return false
	case len(b) > limit:
		ctx.SetConnectionClose()
		writeError(ctx, &APIError{Status: 413, Type: "invalid_request_error", Code: "request_too_large",
			Message: fmt.Sprintf("request body exceeds the %d-byte limit", limit)})
		return false
	}
	ctx.Request.SetBodyRaw(b)
	return true
}
