package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
	"github.com/valyala/fasthttp"
)

// Target says where and how to send requests.
type Target struct {
	// BaseURL is the API root, e.g. http://host:8000/v1.
	BaseURL string
	APIKey  string
	// Endpoint is the API the target speaks (chat by default).
	Endpoint Endpoint
	Model    string
	Headers  [][2]string
	// ExtraBody is a JSON object merged into every request body; its keys
	// win over knee's own.
	ExtraBody json.RawMessage
	// CountTokens, when set (--tokenizer), counts a text's tokens as the
	// model does: a reasoned answer's thought and answer, kept as they
	// stream, are counted by it once the answer ends, to split the
	// server's completion count exactly where its events packed tokens.
	CountTokens func(string) int
	// AnswerBudget bounds the bytes of answers read whole (pooled ones,
	// completions not streamed) held at once across the client's requests;
	// past it a request fails as client_saturated. 0 means no bound but
	// each answer's own (MaxAnswerBytes).
	AnswerBudget int64
	// IgnoreEOS asks the server to generate every request's max_tokens,
	// whatever its end-of-sequence token says (vLLM's, SGLang's,
	// llama.cpp's and knee sim's ignore_eos), where the API takes it.
	IgnoreEOS bool
	// Timeout is the time allowed from the send to the first byte of the
	// response, and then between content chunks of the stream: SSE
	// comments, role-only chunks and empty events do not reset it. Zero
	// means no timeout.
	Timeout time.Duration
	// RequestTimeout bounds a whole request, from the send to the end of
	// its stream. Zero means no limit.
	RequestTimeout time.Duration
	// IdleConnTimeout is how long an idle pooled connection is kept. Zero
	// means DefaultIdleConnTimeout.
	IdleConnTimeout time.Duration
	// UserAgent is sent as User-Agent.
	UserAgent string
	// Tools are offered with every request that has none of its own
	// (chat's tools, laid flat for the Responses API), with ToolChoice
	// as tool_choice when set: auto, required, none or a function's
	// name.
	Tools      []workload.Tool
	ToolChoice string
	// ToolRounds and ToolResult answer a multi-turn call's tool calls
	// with a canned result, for the model to go on (driver.Options).
	ToolRounds int
	ToolResult string
	// ServerHistory has a multi-turn call's later turns continue the
	// answer before them on the server (the Responses API's
	// previous_response_id), sending only their new messages.
	ServerHistory bool
	// Network, when set, is how connections to the target are opened
	// (WithDial); nil dials TCP.
	Network DialFunc
	// Retries is how many times a request that got 429, 503 or a
	// connection error is sent again, after an exponential backoff that
	// honours Retry-After. Zero (the default) never retries.
	Retries int
}

// Client sends streaming requests to one target over a pool of fasthttp
// connections sized to the load, so no request fails for lack of one.
type Client struct {
	t     Target
	proto protocol
	hc    *fasthttp.HostClient
	// wide is hc with room for headers up to MaxHeaderBytes, made the
	// first time a response's headers outgrow hc's (useWide).
	wide     *fasthttp.HostClient
	wideOnce sync.Once
	useWide  atomic.Bool
	uri      string
	auth     string
	extra    []extraField
	dialer   *dialer
	start    time.Time
	resent   atomic.Int64
	// extraMaxTokens is the max_tokens --extra-body sets (0 when it sets
	// one that is not a number), or -1 when it sets none.
	extraMaxTokens int
	// extraIgnoreEOS is the ignore_eos --extra-body sets (1 true, 0
	// anything else), or -1 when it sets none.
	extraIgnoreEOS int
	// answers are the bytes of answers read whole in flight.
	answers answerBudget
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
		return nil, fmt.Errorf("base URL %q must look like http://host:port/v1", results.RedactURL(t.BaseURL))
	}
	proto, err := protocolFor(t.Endpoint)
	if err != nil {
		return nil, err
	}
	if t.Endpoint == "" {
		t.Endpoint = kind.Default
	}
	k := t.Endpoint.Kind()
	addr := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			addr += ":443"
		} else {
			addr += ":80"
		}
	}
	c := &Client{t: t, proto: proto, start: time.Now(), extraMaxTokens: -1, extraIgnoreEOS: -1}
	c.answers.limit = t.AnswerBudget
	c.uri = kindURI(k, t.BaseURL)
	if t.APIKey != "" {
		c.auth = "Bearer " + t.APIKey
	}
	if err := c.readExtra(t.ExtraBody, k.Budget); err != nil {
		return nil, err
	}
	if maxConns < 1 {
		maxConns = 1
	}
	c.dialer = &dialer{firstByte: t.Timeout, total: t.RequestTimeout, conns: map[*trackedConn]struct{}{}, network: t.Network}
	if u.Scheme == "https" {
		c.dialer.tlsHost = u.Hostname()
	}
	idle := t.IdleConnTimeout
	if idle <= 0 {
		idle = DefaultIdleConnTimeout
	}
	ua := t.UserAgent
	if ua == "" {
		ua = "knee"
	}
	c.hc = c.newHostClient(addr, u.Scheme == "https", ua, idle, maxConns, HeaderBytes)
	return c, nil
}

// kindURI is where requests of kind k go from the API root base: under
// it, or under the server's root for a kind served beside /v1.
func kindURI(k kind.Kind, base string) string {
	path, underAPI := k.ClientPath()
	if underAPI {
		return joinURL(base, path)
	}
	return joinURL(rootURL(base), path)
}

// joinURL appends path to the base URL's path, keeping its query (some
// gateways take a key there) after it.
func joinURL(base, path string) string {
	u, err := url.Parse(base)
	if err != nil {
		return strings.TrimRight(base, "/") + path
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	return u.String()
}

// rootURL is the base URL without its trailing /v1: where /metrics lives.
func rootURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1")
	u.RawPath = ""
	return u.String()
}

// HeaderBytes is the room for a response's headers a request in flight
// holds; MaxHeaderBytes the most any response's may take (larger ones
// fail the request as malformed, saying so).
const (
	HeaderBytes    = 16 << 10
	MaxHeaderBytes = 64 << 10
)

// newHostClient is the connection pool, reading response headers of up
// to headerBytes.
func (c *Client) newHostClient(addr string, tls bool, ua string, idle time.Duration, maxConns, headerBytes int) *fasthttp.HostClient {
	return &fasthttp.HostClient{
		Addr:                addr,
		Name:                ua,
		IsTLS:               tls,
		Dial:                c.dialer.dial,
		MaxConns:            maxConns,
		MaxConnWaitTimeout:  time.Hour,
		MaxIdleConnDuration: idle,
		WriteTimeout:        30 * time.Second,
		StreamResponseBody:  true,
		// A request in flight holds this buffer for its whole stream:
		// 64 KiB each made 12,000 requests waiting on a stalled server a
		// 775 MB heap, 16 KiB a 169 MB one. Headers past it (proxies add
		// some; vLLM sends 200 bytes) move the client to a wide pool.
		ReadBufferSize: headerBytes,
		// A request is sent again only when nothing of it left: the pooled
		// connection was found closed before the write. Every stale
		// connection in the pool may be found in turn, so allow as many
		// attempts as there are connections.
		MaxIdemponentCallAttempts: maxConns + 2,
		RetryIfErr: func(_ *fasthttp.Request, _ int, err error) (bool, bool) {
			return false, errors.Is(err, errStaleConn)
		},
	}
}

// pool is the connection pool requests go out on: the wide one once a
// response's headers outgrew the narrow one's buffer.
func (c *Client) pool() *fasthttp.HostClient {
	if c.useWide.Load() {
		return c.wide
	}
	return c.hc
}

// widen moves the client to a pool whose buffers hold headers of up to
// MaxHeaderBytes, for good.
func (c *Client) widen() {
	c.wideOnce.Do(func() {
		h := c.hc
		c.wide = c.newHostClient(h.Addr, h.IsTLS, h.Name, h.MaxIdleConnDuration, h.MaxConns, MaxHeaderBytes)
		c.useWide.Store(true)
	})
}

// DefaultIdleConnTimeout is how long an idle connection is kept: less than
// the 5 s after which uvicorn (in front of vLLM and SGLang) closes idle
// keep-alive connections, so knee rarely reaches for one the server is
// closing.
const DefaultIdleConnTimeout = 4 * time.Second

// ConnStats counts what happened to the client's connections.
func (c *Client) ConnStats() (opened, stale, resent int64) {
	return c.dialer.opened.Load(), c.dialer.stale.Load(), c.resent.Load()
}

// ServerHistory reports whether a call's later turns leave the history
// to the server (Target.ServerHistory).
func (c *Client) ServerHistory() bool { return c.t.ServerHistory }

// Endpoint is the kind the client sends.
func (c *Client) Endpoint() Endpoint { return c.t.Endpoint }

// Tools are the tools every request offers (Target.Tools).
func (c *Client) Tools() []workload.Tool { return c.t.Tools }

// ToolLoop is how a call's tool calls are answered (Target.ToolRounds,
// Target.ToolResult).
func (c *Client) ToolLoop() (rounds int, result string) { return c.t.ToolRounds, c.t.ToolResult }

// SetStart sets the instant that record times are measured from.
func (c *Client) SetStart(t time.Time) { c.start = t }

// Now is the time since the start of the run (SetStart) on the monotonic
// clock: what a record's times are measured on.
func (c *Client) Now() time.Duration { return time.Since(c.start) }

// Abort makes every open and future connection fail at once; in-flight
// requests end as interrupted.
func (c *Client) Abort() { c.dialer.abort() }

// Close releases idle connections.
func (c *Client) Close() {
	c.hc.CloseIdleConnections()
	if c.useWide.Load() {
		c.wide.CloseIdleConnections()
	}
}

// appendBody writes the JSON body for r.
func (c *Client) appendBody(dst []byte, r *workload.Request) []byte {
	extra := c.extra
	if len(r.Fields) > 0 {
		extra = withFields(c.extra, r.Fields)
	}
	w := &body{dst: append(dst, '{'), extra: extra, ignoreEOS: c.t.IgnoreEOS, tools: c.t.Tools, toolChoice: c.t.ToolChoice,
		layout: c.t.Endpoint.Kind().Tools}
	model := c.t.Model
	if r.Model != "" {
		model = r.Model
	}
	c.proto.appendBody(w, r, model)
	for _, e := range extra {
		w.key(e.key)
		w.dst = append(w.dst, e.value...)
	}
	return append(w.dst, '}')
}

// body is a JSON object being written: a protocol opens its keys with
// field, which leaves out a key --extra-body sets (its value wins).
type body struct {
	dst   []byte
	n     int
	extra []extraField
	// ignoreEOS is the target's: every request ignores its EOS.
	ignoreEOS bool
	// tools and toolChoice are the target's, for requests without tools
	// of their own.
	tools      []workload.Tool
	toolChoice string
	// layout is how the kind lays out tools.
	layout kind.ToolLayout
}

// field writes key (and the colon) and reports true, unless --extra-body
// sets key.
func (b *body) field(key string) bool {
	for _, e := range b.extra {
		if e.key == key {
			return false
		}
	}
	b.key(key)
	return true
}

func (b *body) key(key string) {
	if b.n > 0 {
		b.dst = append(b.dst, ',')
	}
	b.n++
	b.dst = strconv.AppendQuote(b.dst, key)
	b.dst = append(b.dst, ':')
}

// JoinURL appends path to the base URL's path.
func JoinURL(base, path string) string { return joinURL(base, path) }

// RootURL is the base URL without its trailing /v1: where /metrics lives.
func RootURL(base string) string { return rootURL(base) }
