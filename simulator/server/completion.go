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
	if apiErr := checkFaultHeader(ctx); apiErr != nil {
		writeError(ctx, apiErr)
		return
	}
	d, err := h.decode(s, ctx.PostBody())
	if err != nil {
		writeError(ctx, err.(*APIError))
		return
	}
	m, adapter, apiErr := s.modelFor(d, h)
	if apiErr != nil {
		writeError(ctx, apiErr)
		return
	}
	fault, faulty := s.decideFault(ctx, m, &d.Gen)
	if faulty && s.errorFault(ctx, m, fault) {
		return
	}
	if m.overloaded(ctx) {
		return
	}
	plan, reasoning, err := s.plan(d, h, m)
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
	r := &run{s: s, h: h, m: m, plan: plan, arrival: arrival, chat: h.kind.Chat(), model: d.Model,
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
	s.answer(ctx, r, d.Stream)
}

// checkFaultHeader refuses a fault the simulator does not know.
func checkFaultHeader(ctx *fasthttp.RequestCtx) *APIError {
	f := ctx.Request.Header.Peek("X-Knee-Fault")
	if len(f) == 0 {
		return nil
	}
	if _, ok := faultKindOf(string(f)); ok {
		return nil
	}
	return &APIError{Status: 400, Type: "invalid_request_error", Param: "X-Knee-Fault",
		Message: fmt.Sprintf("unknown fault %.40q: use one of %s (or 429, 500, 503, 401)", f, strings.Join(FaultKinds, ", "))}
}

// modelFor is the model (and LoRA adapter) a request names, or the
// server's refusal: no such model, or one that cannot serve it.
func (s *Server) modelFor(d *decoded, h *handler) (*model, int, *APIError) {
	m, adapter := s.models[d.Model], 0
	if m == nil {
		m, adapter = s.adapterOf(d.Model)
	}
	if m == nil {
		return nil, 0, modelNotFound(d.Model)
	}
	if d.priority != 0 && m.spec.SchedulingPolicy != "priority" {
		// vLLM refuses a priority its scheduler would not honour.
		return nil, 0, badRequest("priority", "Got priority %d but Priority scheduling is not enabled.", d.priority)
	}
	d.Gen.WantIDs = m.wantIDs
	if len(d.images.Raws) > 0 && m.spec.Vision == nil {
		return nil, 0, badRequest(d.images.Params[0]+".type", "The model %s is not a multimodal model: it takes no images", d.Model)
	}
	if pooling := m.spec.Pooling != nil; pooling != h.kind.Pooled() {
		return nil, 0, badRequest("model", "The model %s does not support the %s API (it is a %s model)", d.Model, h.kind.Title, map[bool]string{true: "pooling", false: "generative"}[pooling])
	}
	if err := checkTools(&d.Gen, m.spec.Tools, d.Model); err != nil {
		return nil, 0, err.(*APIError)
	}
	return m, adapter, nil
}

// overloaded refuses the request when the model's queue is full, as the
// model's faults say (429 with Retry-After, or 503).
func (m *model) overloaded(ctx *fasthttp.RequestCtx) bool {
	fs := m.faults.get()
	if fs.MaxWaiting <= 0 || m.waiting() < fs.MaxWaiting {
		return false
	}
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
	return true
}

// plan is what the engine will do for the request: its prompt and answer
// tokens (or a pooling pass), its images, tools and reasoning.
func (s *Server) plan(d *decoded, h *handler, m *model) (*Plan, *ReasoningSpec, error) {
	var plan *Plan
	var err error
	if h.kind.Pooled() {
		plan = PoolPlan(d.inputs, m.wantIDs)
		err = content.CheckContext(plan.PromptTokens, nil, m.spec.ContextLength)
	} else {
		plan, err = s.opts.Responder.Generate(&d.Gen, m.spec.ContextLength)
	}
	reasoning := m.spec.Reasoning.ForRequest(d.effort, d.noThinking)
	if err == nil && len(d.images.Raws) > 0 {
		fetch, release := s.fetcher()
		err = WithImages(plan, &d.images, m.spec.Vision, &m.encoded, fetch, d.Gen.MaxTokens, m.spec.ContextLength)
		release()
	}
	if err == nil && h.kind.Chat() {
		CallTool(plan, m.spec.Tools, &d.Gen, m.spec.ContextLength)
		reasoning = Scripted(plan, reasoning, d.noThinking)
		Think(plan, reasoning, d.Gen.MaxTokens, m.spec.ContextLength)
	}
	return plan, reasoning, err
}

// answer sends r's answer: one body, or a stream that a cut fault ends
// early with the connection closed.
func (s *Server) answer(ctx *fasthttp.RequestCtx, r *run, stream bool) {
	if !stream {
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
