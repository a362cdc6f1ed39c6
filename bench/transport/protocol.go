package transport

import (
	"fmt"
	"strconv"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// Endpoint names the API a target speaks: a kind of the table in
// workload/kind.
type Endpoint = kind.Name

// Endpoints lists them, for help and errors.
var Endpoints = kind.Names()

// protocol is what changes from one API to another: the request's body,
// and how its answer reads. Everything else (the connection, the SSE
// framing, the timing, the error classes) is shared. Each kind's protocol
// is in a file of its own and registered by the kind's name; a kind's
// answer is read by its streamProtocol or its pooledProtocol.
type protocol interface {
	// appendBody writes the request's fields into b.
	appendBody(b *body, r *workload.Request, model string)
}

// streamProtocol reads a generating kind's stream of events.
type streamProtocol interface {
	protocol
	// scan reads one event's data into c; p carries what the stream's
	// earlier events said.
	scan(payload []byte, c *chunk, p *progress)
	// text adds an event's generated text to dst (kept for a call's
	// history).
	text(dst, payload []byte) []byte
	// keepCall keeps what an event that carries a tool call says of it
	// (c.tool or c.toolItem set), for a call's next turn.
	keepCall(rec *record.Record, payload []byte)
}

// progress is what a protocol remembers from event to event of a stream.
type progress struct {
	// completion is the completion count the last event reported
	// (cumulative protocols say how far they are, not what is new).
	completion int
	// prompt and cached are the prompt's and the cache's tokens an
	// earlier event reported (when seen), for a protocol whose usage
	// comes in parts: the input at the start, the output at the end.
	prompt, cached         int
	promptSeen, cachedSeen bool
}

// protocols are the registered kinds' protocols.
var protocols = map[kind.Name]protocol{}

// register makes p the protocol of the kind named n. A kind the table
// does not have, or a second protocol for one, is a programming error.
func register(n kind.Name, p protocol) {
	k, ok := kind.Of(n)
	_, dup := protocols[n]
	_, streams := p.(streamProtocol)
	_, pools := p.(pooledProtocol)
	switch {
	case !ok, dup:
		panic(fmt.Sprintf("transport: protocol for %q: no such kind, or registered twice", n))
	case k.Streamed != streams || k.Streamed == pools:
		panic(fmt.Sprintf("transport: protocol for %q does not read the answer the kind table says", n))
	}
	protocols[n] = p
}

func protocolFor(e Endpoint) (protocol, error) {
	if e == "" {
		e = kind.Default
	}
	p, ok := protocols[e]
	if !ok {
		return nil, fmt.Errorf("endpoint %w", kind.Check(e))
	}
	return p, nil
}

// openAIBody writes what both OpenAI APIs share after the prompt.
func openAIBody(b *body, r *workload.Request) {
	if r.MaxTokens > 0 && b.field("max_tokens") {
		b.dst = strconv.AppendInt(b.dst, int64(r.MaxTokens), 10)
	}
	if (r.IgnoreEOS || b.ignoreEOS) && b.field("ignore_eos") {
		b.dst = append(b.dst, "true"...)
	}
	if b.field("stream") {
		b.dst = append(b.dst, "true"...)
	}
	if b.field("stream_options") {
		b.dst = append(b.dst, `{"include_usage":true}`...)
	}
}
