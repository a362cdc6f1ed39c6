package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kneebench/knee/simulator/content"
	"github.com/valyala/fasthttp"
)

// completion serves one request of the kind h handles.
func (s *Server) completion(ctx *fasthttp.RequestCtx, arrival time.Time, h *handler) {
	if f := ctx.Request.Header.Peek("X-Knee-Fault"); len(f) > 0 {
		if _, ok := faultKindOf(string(f)); !ok {
			writeError(ctx, &APIError{Status: 400, Type: "invalid_request_error", Param: "X-Knee-Fault",
				Message: fmt.Sprintf("unknown fault %.40q: use one of %s (or 429, 500, 503, 401)", f, strings.Join(FaultKinds, ", "))})
			return
		}
	}
	chat := h.kind.Chat()
	d, err := h.decode(s, ctx.PostBody())
	if err != nil {
		writeError(ctx, err.(*APIError))
		return
	}
	m, adapter := s.models[d.Model], 0
	if m == nil {
		m, adapter = s.adapterOf(d.Model)
	}
	if m == nil {
		writeError(ctx, modelNotFound(d.Model))
		return
	}
	if d.priority != 0 && m.spec.SchedulingPolicy != "priority" {
		// vLLM refuses a priority its scheduler would not honour.
		writeError(ctx, badRequest("priority", "Got priority %d but Priority scheduling is not enabled.", d.priority))
		return
	}
	d.Gen.WantIDs = m.wantIDs
	if len(d.images.Raws) > 0 && m.spec.Vision == nil {
		writeError(ctx, badRequest(d.images.Params[0]+".type", "The model %s is not a multimodal model: it takes no images", d.Model))
		return
	}
	if pooling := m.spec.Pooling != nil; pooling != h.kind.Pooled() {
		writeError(ctx, badRequest("model", "The model %s does not support the %s API (it is a %s model)", d.Model, h.kind.Title, map[bool]string{true: "pooling", false: "generative"}[pooling]))
		return
	}
	if err := checkTools(&d.Gen, m.spec.Tools, d.Model); err != nil {
		writeError(ctx, err.(*APIError))
		return
	}
	fault, faulty := s.decideFault(ctx, m, &d.Gen)
	if faulty && s.errorFault(ctx, m, fault) {
		return
	}
	if fs := m.faults.get(); fs.MaxWaiting > 0 && m.waiting() >= fs.MaxWaiting {
		status := fs.OverloadStatus
		if status == 0 {
			status = 429
		}
		m.mm.Fault(FaultOverload)
		m.sum.Fault(FaultOverload)
		if status == 429 {
			ctx.Response.Header.Set("Retry-After", "1")
			writeError(ctx, &APIError{Status: 429, Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "the server is overloaded: too many requests waiting"})
		} else {
			writeError(ctx, &APIError{Status: 503, Type: "server_error", Code: "service_unavailable", Message: "the server is overloaded: too many requests waiting"})
		}
		return
	}
	var plan *Plan
	if h.kind.Pooled() {
		plan = PoolPlan(d.inputs, m.wantIDs)
		err = content.CheckContext(plan.PromptTokens, nil, m.spec.ContextLength)
	} else {
		plan, err = s.opts.Responder.Generate(&d.Gen, m.spec.ContextLength)
	}
	reasoning := m.spec.Reasoning.ForRequest(d.effort, d.noThinking)
	if err == nil && len(d.images.Raws) > 0 {
		err = WithImages(plan, &d.images, m.spec.Vision, &m.encoded, FetchImage, d.Gen.MaxTokens, m.spec.ContextLength)
	}
	if err == nil && chat {
		CallTool(plan, m.spec.Tools, &d.Gen, m.spec.ContextLength)
		reasoning = Scripted(plan, reasoning, d.noThinking)
		Think(plan, reasoning, d.Gen.MaxTokens, m.spec.ContextLength)
	}
	if err == nil {
		plan.Adapter, plan.Priority = adapter, d.priority
		err = m.engine.Check(plan)
	}
	if err != nil {
		writeError(ctx, err.(*APIError))
		return
	}
	if d.Gen.MaxTokens != nil {
		m.mm.MaxTokens.Observe(float64(*d.Gen.MaxTokens))
	}
	r := &run{s: s, h: h, m: m, plan: plan, arrival: arrival, chat: chat, model: d.Model,
		id: s.ids.Add(1), includeUsage: d.IncludeUsage, reasoning: reasoning,
		store: d.store, inputs: d.inputs, docs: d.docs, topN: d.topN}
	if h.kind.History {
		// What a later request continues: the conversation, without the
		// tools (it sends its own).
		r.messages = d.Gen.Messages
		if d.toolsFirst {
			r.messages = r.messages[1:]
		}
	}
	if faulty {
		r.fault = &fault
	}
	if !d.Stream {
		s.open.Add(1)
		defer s.open.Done()
		r.unary(ctx)
		return
	}
	ctx.SetContentType("text/event-stream")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	if r.fault != nil && r.fault.Kind == FaultCut {
		// The stream will end after a few tokens without a finish chunk or
		// [DONE], and the connection closes after it. (Closing the socket
		// from the writer would race fasthttp's copy of the tokens already
		// flushed.)
		ctx.SetConnectionClose()
	}
	s.open.Add(1)
	ctx.SetBodyStream(newStreamBody(r.stream, s.open.Done, ctx.Conn()), -1)
}

// waiting is the number of requests queued for the model's engine.
func (m *model) waiting() int {
	if m.sched != nil {
		return m.sched.State().Waiting
	}
	return 0
}

// decideFault picks an injected fault for this request, if any.
func (s *Server) decideFault(ctx *fasthttp.RequestCtx, m *model, g *GenRequest) (FaultRule, bool) {
	spec := m.faults.get()
	header, _ := faultKindOf(string(ctx.Request.Header.Peek("X-Knee-Fault")))
	if header == "" && len(spec.Rules) == 0 {
		return FaultRule{}, false
	}
	said := content.LastUserText(g)
	if g.Chat {
		said = ""
		for _, msg := range g.Messages {
			said += msg.Role + "\x00" + msg.Text + "\x00"
		}
	}
	return spec.Decide(header, said, m.faults.occurrence(said))
}

// errorFault answers with an injected error; it reports false for faults
// that act on the stream instead.
func (s *Server) errorFault(ctx *fasthttp.RequestCtx, m *model, f FaultRule) bool {
	var e *APIError
	switch f.Kind {
	case Fault429:
		if f.RetryAfterS != nil && *f.RetryAfterS > 0 {
			ctx.Response.Header.Set("Retry-After", strconv.Itoa(*f.RetryAfterS))
		}
		e = &APIError{Status: 429, Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "Rate limit reached (injected by knee sim)."}
	case Fault500:
		e = &APIError{Status: 500, Type: "server_error", Message: "The server had an error while processing your request (injected by knee sim)."}
	case Fault503:
		e = &APIError{Status: 503, Type: "server_error", Code: "service_unavailable", Message: "The engine is currently overloaded (injected by knee sim)."}
	case Fault401:
		e = &APIError{Status: 401, Type: "authentication_error", Code: "invalid_api_key", Message: "Incorrect API key provided (injected by knee sim)."}
	case FaultContextLength:
		e = &APIError{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages",
			Message: "This model's maximum context length is exceeded (injected by knee sim)."}
	default:
		return false
	}
	m.mm.Fault(f.Kind)
	m.sum.Fault(f.Kind)
	writeError(ctx, e)
	return true
}
