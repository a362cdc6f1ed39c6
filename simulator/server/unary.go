package server

import (
	"errors"

	"github.com/valyala/fasthttp"
)

// errCut stops an unstreamed answer at its injected cut.
var errCut = errors.New("cut by an injected fault")

// unary waits out the whole answer, then writes one JSON body: a chat or
// completions answer, SGLang's, a Responses object, or a pooling model's
// embeddings or ranking.
func (r *run) unary(ctx *fasthttp.RequestCtx) {
	defer r.running()()
	cut := false
	info, err := r.m.engine.Stream(r.s.streams, r.plan, r.arrival, func(ev TokenEvent) error {
		if r.fault != nil && !r.applyFault(ev, func() error { return nil }) {
			// A cut answer is never sent: the connection closes instead.
			cut = true
			return errCut
		}
		r.text = append(r.text, r.plan.Tokens[ev.Index]...)
		r.observe(ev)
		return nil
	})
	if cut {
		r.finish("abort", info)
		ctx.SetConnectionClose()
		if c := ctx.Conn(); c != nil {
			_ = c.Close()
		}
		return
	}
	if err != nil {
		r.finish("abort", info)
		writeError(ctx, &APIError{Status: 503, Type: "server_error", Message: "the server is shutting down"})
		return
	}
	if r.generate {
		ctx.SetStatusCode(200)
		ctx.SetContentType("application/json")
		ctx.SetBody(r.unaryGenerate(info))
		r.finish(r.plan.FinishReason, info)
		return
	}
	if r.pooled {
		ctx.SetStatusCode(200)
		ctx.SetContentType("application/json")
		switch {
		case r.scores:
			ctx.SetBody(r.scoreBody())
		case r.docs != nil:
			ctx.SetBody(r.rerankBody())
		default:
			ctx.SetBody(r.embeddingsBody(info))
		}
		r.finish(r.plan.FinishReason, info)
		return
	}
	if r.responses {
		ctx.SetStatusCode(200)
		ctx.SetContentType("application/json")
		ctx.SetBody(r.unaryResponse(info))
		r.finish(r.plan.FinishReason, info)
		return
	}
	b := r.appendHead(nil, "chat.completion")
	if r.chat {
		b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
		b = appendJSONString(b, string(r.text))
		b = append(b, `},"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":`...)
		b = appendJSONString(b, string(r.text))
		b = append(b, `,"logprobs":null,"finish_reason":`...)
	}
	b = appendJSONString(b, r.plan.FinishReason)
	b = append(b, `}],"usage":`...)
	b = r.appendUsage(b, info)
	b = append(b, '}')
	ctx.SetStatusCode(200)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
	r.finish(r.plan.FinishReason, info)
}
