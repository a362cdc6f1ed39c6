package server

import (
	"errors"

	"github.com/valyala/fasthttp"
)

// errCut stops an unstreamed answer at its injected cut.
var errCut = errors.New("cut by an injected fault")

// unary waits out the whole answer, then writes it as one JSON body, its
// kind's answer.
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
	ctx.SetStatusCode(200)
	ctx.SetContentType("application/json")
	ctx.SetBody(r.h.answer.body(r, info))
	r.finish(r.plan.FinishReason, info)
}
