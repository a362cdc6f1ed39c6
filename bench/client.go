package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kneebench/knee/workload"
	"github.com/valyala/fasthttp"
)

// Target says where and how to send requests.
type Target struct {
	// BaseURL is the API root, e.g. http://host:8000/v1.
	BaseURL string
	APIKey  string
	// Endpoint is "chat" (/chat/completions) or "completions".
	Endpoint string
	Model    string
	Headers  [][2]string
	// ExtraBody is a JSON object merged into every request body; its keys
	// win over knee's own.
	ExtraBody json.RawMessage
	// Timeout is the time allowed before the first byte of a response and
	// between chunks of a stream. Zero means no timeout.
	Timeout time.Duration
	// UserAgent is sent as User-Agent.
	UserAgent string
	// Retries is how many times a request that got 429, 503 or a
	// connection error is sent again, after an exponential backoff that
	// honours Retry-After. Zero (the default) never retries.
	Retries int
}

// Client sends streaming requests to one target over a pool of fasthttp
// connections sized to the load, so no request fails for lack of one.
type Client struct {
	t      Target
	hc     *fasthttp.HostClient
	uri    string
	auth   string
	extra  []extraField
	dialer *dialer
	start  time.Time
}

type extraField struct {
	key   string
	value json.RawMessage
}

// NewClient returns a client for t whose pool holds up to maxConns
// connections.
func NewClient(t Target, maxConns int) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(t.BaseURL, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("base URL %q must look like http://host:port/v1", t.BaseURL)
	}
	switch t.Endpoint {
	case "", "chat":
		t.Endpoint = "chat"
	case "completions":
	default:
		return nil, fmt.Errorf("endpoint must be chat or completions, got %q", t.Endpoint)
	}
	addr := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			addr += ":443"
		} else {
			addr += ":80"
		}
	}
	c := &Client{t: t, start: time.Now()}
	if t.Endpoint == "chat" {
		c.uri = u.String() + "/chat/completions"
	} else {
		c.uri = u.String() + "/completions"
	}
	if t.APIKey != "" {
		c.auth = "Bearer " + t.APIKey
	}
	if len(bytes.TrimSpace(t.ExtraBody)) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(t.ExtraBody, &m); err != nil {
			return nil, fmt.Errorf("extra body must be a JSON object: %v", err)
		}
		for k, v := range m {
			c.extra = append(c.extra, extraField{k, v})
		}
		sort.Slice(c.extra, func(i, j int) bool { return c.extra[i].key < c.extra[j].key })
	}
	if maxConns < 1 {
		maxConns = 1
	}
	c.dialer = &dialer{idle: t.Timeout, conns: map[*trackedConn]struct{}{}}
	ua := t.UserAgent
	if ua == "" {
		ua = "knee"
	}
	c.hc = &fasthttp.HostClient{
		Addr:                addr,
		Name:                ua,
		IsTLS:               u.Scheme == "https",
		Dial:                c.dialer.dial,
		MaxConns:            maxConns,
		MaxConnWaitTimeout:  time.Hour,
		MaxIdleConnDuration: time.Minute,
		WriteTimeout:        30 * time.Second,
		StreamResponseBody:  true,
		RetryIfErr:          func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
	}
	return c, nil
}

// SetStart sets the instant that record times are measured from.
func (c *Client) SetStart(t time.Time) { c.start = t }

// now is the time since the start of the run on the monotonic clock.
func (c *Client) now() time.Duration { return time.Since(c.start) }

// Abort makes every open and future connection fail at once; in-flight
// requests end as interrupted.
func (c *Client) Abort() { c.dialer.abort() }

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Model returns the target's model name.
func (c *Client) Model() string { return c.t.Model }

// appendBody writes the JSON body for r.
func (c *Client) appendBody(dst []byte, r *workload.Request) []byte {
	dst = append(dst, '{')
	first := true
	field := func(key string) bool {
		for _, e := range c.extra {
			if e.key == key {
				return false
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = strconv.AppendQuote(dst, key)
		dst = append(dst, ':')
		return true
	}
	if field("model") {
		dst = appendJSONString(dst, c.t.Model)
	}
	if c.t.Endpoint == "chat" {
		if field("messages") {
			dst = append(dst, '[')
			for i, m := range r.Messages {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"role":`...)
				dst = appendJSONString(dst, m.Role)
				dst = append(dst, `,"content":`...)
				dst = appendJSONString(dst, m.Content)
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
	} else if field("prompt") {
		dst = appendJSONString(dst, r.Text())
	}
	if r.MaxTokens > 0 && field("max_tokens") {
		dst = strconv.AppendInt(dst, int64(r.MaxTokens), 10)
	}
	if r.IgnoreEOS && field("ignore_eos") {
		dst = append(dst, "true"...)
	}
	if field("stream") {
		dst = append(dst, "true"...)
	}
	if field("stream_options") {
		dst = append(dst, `{"include_usage":true}`...)
	}
	for _, e := range c.extra {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = strconv.AppendQuote(dst, e.key)
		dst = append(dst, ':')
		dst = append(dst, e.value...)
	}
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

// scratch is per-goroutine reusable state for one request at a time.
type scratch struct {
	body []byte
	lr   *lineReader
	ch   chunk
}

func newScratch() *scratch {
	return &scratch{lr: newLineReader(nil, 16*1024)}
}

var scratchPool = sync.Pool{New: func() any { return newScratch() }}

// Do sends r and fills rec with what happened. It never returns an error:
// every failure becomes rec.Class. keepText asks for the generated text in
// rec.Text.
func (c *Client) Do(r *workload.Request, rec *Record, keepText bool) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)

	s.body = c.appendBody(s.body[:0], r)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI(c.uri)
	req.Header.SetContentType("application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	for _, h := range c.t.Headers {
		req.Header.Set(h[0], h[1])
	}
	req.SetBodyRaw(s.body)

	rec.Sent = c.now()
	err := c.hc.Do(req, resp)
	if err != nil {
		rec.Done = c.now()
		rec.Class, rec.Message = c.classify(err, false), err.Error()
		return
	}
	rec.Status = resp.StatusCode()
	body := resp.BodyStream()
	if body == nil {
		body = bytes.NewReader(resp.Body())
	}
	closer, _ := body.(fasthttp.ReadCloserWithError)
	fail := func(class string, err error) {
		rec.Class = class
		if err != nil {
			rec.Message = err.Error()
		}
		if closer != nil {
			_ = closer.CloseWithError(err)
		}
	}
	defer func() { rec.Done = c.now() }()

	if rec.Status != fasthttp.StatusOK {
		if ra := resp.Header.Peek("Retry-After"); len(ra) > 0 {
			if secs, err := strconv.ParseFloat(string(ra), 64); err == nil && secs >= 0 {
				rec.RetryAfter = time.Duration(secs * float64(time.Second))
			}
		}
		msg, _ := io.ReadAll(io.LimitReader(body, 64*1024))
		_, _ = io.Copy(io.Discard, io.LimitReader(body, 1<<20))
		class, text := httpErrorClass(rec.Status, msg)
		rec.Class, rec.Message = class, text
		return
	}
	if ct := resp.Header.ContentType(); !bytes.HasPrefix(ct, []byte("text/event-stream")) {
		c.readUnstreamed(body, rec, fail, keepText)
		return
	}
	lr := s.lr
	lr.reset(body)
	done, finished := false, false
	for {
		line, err := lr.next()
		if err != nil {
			switch {
			case err == io.EOF:
				if done || finished {
					return
				}
				fail(ClassTruncated, errors.New("stream ended without [DONE]"))
			case err == errEventTooLarge:
				fail(ClassMalformed, err)
			default:
				fail(c.classify(err, rec.Chunks > 0), err)
			}
			return
		}
		payload, ok := dataPayload(line)
		if !ok {
			if !isSSEField(line) {
				fail(ClassMalformed, fmt.Errorf("not an SSE line: %.60q", line))
				return
			}
			continue
		}
		if done {
			continue
		}
		t := c.now()
		if bytes.Equal(payload, payloadDone) {
			done = true
			continue
		}
		if len(payload) == 0 || payload[0] != '{' {
			fail(ClassMalformed, fmt.Errorf("event is not a JSON object: %.60q", payload))
			return
		}
		ch := &s.ch
		scanChunk(payload, ch)
		if ch.hasError {
			fail(ClassStreamError, fmt.Errorf("error event: %.200s", payload))
			return
		}
		if ch.content {
			if rec.Chunks == 0 {
				rec.FirstToken = t
			}
			rec.Chunks++
			rec.LastToken = t
			rec.ChunkTimes = append(rec.ChunkTimes, t)
			if keepText {
				rec.Text = appendContent(rec.Text, payload)
			}
		}
		if ch.finished {
			finished = true
		}
		if ch.usage {
			rec.UsageReported = true
			rec.PromptTokens = ch.promptTokens
			rec.CompletionTokens = ch.outTokens
			if ch.cachedSeen {
				rec.CachedReported = true
				rec.CachedTokens = ch.cachedTokens
			}
		}
	}
}

// retryable reports whether a failure class is worth another attempt: the
// server asked to come back (429, 503) or the connection never carried a
// response.
func retryable(class string) bool {
	return strings.HasPrefix(class, "http_429") || strings.HasPrefix(class, "http_503") ||
		class == ClassConnectRefused || class == ClassConnectionReset
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

// DoRetry is Do with the target's retries. rec describes the final attempt;
// rec.Attempts and rec.FirstClass keep the first attempt's outcome, so
// retries never hide errors.
func (c *Client) DoRetry(ctx context.Context, r *workload.Request, rec *Record, keepText bool) {
	c.Do(r, rec, keepText)
	if c.t.Retries == 0 {
		return
	}
	rec.Attempts, rec.FirstClass = 1, rec.Class
	for rec.Attempts <= c.t.Retries && retryable(rec.Class) {
		wait := backoff(rec.Attempts, rec.RetryAfter)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		attempts, first := rec.Attempts, rec.FirstClass
		sched, idx, tag, warm, late, waited := rec.Scheduled, rec.Index, rec.Tag, rec.Warmup, rec.Lateness, rec.Waited
		rec.reset()
		rec.Scheduled, rec.Index, rec.Tag, rec.Warmup, rec.Lateness, rec.Waited = sched, idx, tag, warm, late, waited
		c.Do(r, rec, keepText)
		rec.Attempts, rec.FirstClass = attempts+1, first
	}
}

// readUnstreamed handles a 200 answer that is a plain JSON completion
// rather than a stream: the whole answer counts as one chunk.
func (c *Client) readUnstreamed(body io.Reader, rec *Record, fail func(string, error), keepText bool) {
	b, err := io.ReadAll(io.LimitReader(body, 16<<20))
	if err != nil {
		fail(c.classify(err, false), err)
		return
	}
	var v struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			Text string `json:"text"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			PromptTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.Choices) == 0 {
		fail(ClassMalformed, fmt.Errorf("response is neither an event stream nor a completion: %.80q", b))
		return
	}
	t := c.now()
	rec.FirstToken, rec.LastToken, rec.Chunks = t, t, 1
	rec.ChunkTimes = append(rec.ChunkTimes, t)
	if keepText {
		rec.Text = append(rec.Text, v.Choices[0].Message.Content...)
		rec.Text = append(rec.Text, v.Choices[0].Text...)
	}
	if u := v.Usage; u != nil {
		rec.UsageReported = true
		rec.PromptTokens, rec.CompletionTokens = u.PromptTokens, u.CompletionTokens
		if u.PromptTokensDetails != nil {
			rec.CachedReported = true
			rec.CachedTokens = u.PromptTokensDetails.CachedTokens
		}
	}
}

// appendContent appends the text of a chunk's content (or completion text)
// field. It decodes just that string, only for workloads that keep text.
func appendContent(dst, payload []byte) []byte {
	for _, key := range [][]byte{keyContent, keyText} {
		i := bytes.Index(payload, key)
		if i < 0 {
			continue
		}
		v := skipSpace(payload[i+len(key):])
		if len(v) == 0 || v[0] != '"' {
			continue
		}
		end := 1
		for end < len(v) && v[end] != '"' {
			if v[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(v) {
			return dst
		}
		var s string
		if json.Unmarshal(v[:end+1], &s) == nil {
			return append(dst, s...)
		}
	}
	return dst
}

// httpErrorClass names a non-200 answer by status and OpenAI error type.
func httpErrorClass(status int, body []byte) (class, message string) {
	class = "http_" + strconv.Itoa(status)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Error.Type != "" || e.Error.Message != "") {
		if e.Error.Type != "" {
			class += ":" + e.Error.Type
		}
		return class, e.Error.Message
	}
	return class, strings.TrimSpace(string(body[:min(len(body), 200)]))
}

// classify maps a transport error to a class. afterContent tells a stall in
// the middle of a stream from a wait for the first token.
func (c *Client) classify(err error, afterContent bool) string {
	if c.dialer.aborted.Load() {
		return ClassInterrupted
	}
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return ClassClientSaturated
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassConnectRefused
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, fasthttp.ErrTimeout),
		errors.As(err, &ne) && ne.Timeout():
		if afterContent {
			return ClassIdleTimeout
		}
		return ClassFirstTokenTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, fasthttp.ErrConnectionClosed):
		if afterContent {
			return ClassTruncated
		}
		return ClassConnectionReset
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		if afterContent {
			return ClassTruncated
		}
		return ClassConnectionReset
	case strings.Contains(err.Error(), "malformed") || strings.Contains(err.Error(), "cannot parse"):
		return ClassMalformed
	}
	return ClassOther
}

// dialer opens connections that enforce the idle timeout on every read and
// can all be aborted at once.
type dialer struct {
	idle    time.Duration
	mu      sync.Mutex
	conns   map[*trackedConn]struct{}
	aborted atomic.Bool
}

var errAborted = errors.New("run interrupted")

func (d *dialer) dial(addr string) (net.Conn, error) {
	if d.aborted.Load() {
		return nil, errAborted
	}
	nc, err := (&net.Dialer{Timeout: 10 * time.Second}).Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: nc, d: d}
	d.mu.Lock()
	d.conns[tc] = struct{}{}
	d.mu.Unlock()
	if d.aborted.Load() {
		_ = nc.SetDeadline(time.Unix(1, 0))
	}
	return tc, nil
}

func (d *dialer) abort() {
	d.aborted.Store(true)
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.conns {
		_ = c.Conn.SetDeadline(time.Unix(1, 0))
	}
}

type trackedConn struct {
	net.Conn
	d    *dialer
	once sync.Once
}

// Read arms the idle deadline before every read: fasthttp's own read
// timeout is one deadline for the whole response and would cut long
// streams, so the time allowed between chunks is enforced here.
func (c *trackedConn) Read(p []byte) (int, error) {
	if c.d.aborted.Load() {
		return 0, errAborted
	}
	if c.d.idle > 0 {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.d.idle))
	}
	return c.Conn.Read(p)
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.d.mu.Lock()
		delete(c.d.conns, c)
		c.d.mu.Unlock()
	})
	return c.Conn.Close()
}
