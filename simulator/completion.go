package simulator

import (
	"bufio"
	"encoding/json"
	"net"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
)

// completion serves one chat or completions request.
func (s *Server) completion(ctx *fasthttp.RequestCtx, arrival time.Time, chat bool) {
	d, err := decodeRequest(ctx.PostBody(), chat)
	if err != nil {
		writeError(ctx, err.(*APIError))
		return
	}
	m := s.models[d.Model]
	if m == nil {
		writeError(ctx, modelNotFound(d.Model))
		return
	}
	d.Gen.WantIDs = m.wantIDs
	fault, faulty := s.decideFault(ctx, m, &d.Gen)
	if faulty && s.errorFault(ctx, m, fault) {
		return
	}
	if fs := m.faults.get(); fs.MaxWaiting > 0 && m.waiting() >= fs.MaxWaiting {
		status := fs.OverloadStatus
		if status == 0 {
			status = 429
		}
		m.mm.fault(FaultOverload)
		m.sum.fault(FaultOverload)
		if status == 429 {
			ctx.Response.Header.Set("Retry-After", "1")
			writeError(ctx, &APIError{Status: 429, Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "the server is overloaded: too many requests waiting"})
		} else {
			writeError(ctx, &APIError{Status: 503, Type: "server_error", Code: "service_unavailable", Message: "the server is overloaded: too many requests waiting"})
		}
		return
	}
	plan, err := s.opts.Responder.Generate(&d.Gen, m.spec.ContextLength)
	if err == nil {
		err = m.engine.Check(plan)
	}
	if err != nil {
		writeError(ctx, err.(*APIError))
		return
	}
	if d.Gen.MaxTokens != nil {
		m.mm.maxTokens.Observe(float64(*d.Gen.MaxTokens))
	}
	r := &run{s: s, m: m, plan: plan, arrival: arrival, chat: chat, model: d.Model,
		id: s.ids.Add(1), includeUsage: d.IncludeUsage}
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
		r.conn = ctx.Conn()
	}
	s.open.Add(1)
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.open.Done()
		r.stream(w)
	})
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
	header := string(ctx.Request.Header.Peek("X-Knee-Fault"))
	if header == "" && len(spec.Rules) == 0 {
		return FaultRule{}, false
	}
	if header != "" && !validKind(header) {
		return FaultRule{}, false
	}
	content := lastUserText(g)
	if g.Chat {
		content = ""
		for _, msg := range g.Messages {
			content += msg.Role + "\x00" + msg.Text + "\x00"
		}
	}
	return spec.decide(header, content, m.faults.occurrence(content))
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
	m.mm.fault(f.Kind)
	m.sum.fault(f.Kind)
	writeError(ctx, e)
	return true
}

// run is one request being answered.
type run struct {
	s            *Server
	m            *model
	plan         *Plan
	arrival      time.Time
	chat         bool
	model        string
	id           int64
	includeUsage bool
	fault        *FaultRule
	conn         net.Conn

	// Per-token state.
	prev, prevSim float64
	first         time.Time
	firstSim      float64
	last          time.Time
	lastSim       float64
	emitted       int
	buf           []byte
	prefix        []byte
	suffix        []byte
	text          []byte
}

func (r *run) idString() string {
	if r.chat {
		return "chatcmpl-knee-" + strconv.FormatInt(r.id, 10)
	}
	return "cmpl-knee-" + strconv.FormatInt(r.id, 10)
}

// chunkEnvelope builds the bytes around a token, once per request, so the
// per-token path only escapes the token itself.
func (r *run) chunkEnvelope() {
	head := `data: {"id":"` + r.idString() + `","object":"`
	if r.chat {
		head += `chat.completion.chunk","created":` + strconv.FormatInt(r.s.created, 10) + `,"model":` + jsonString(r.model) +
			`,"choices":[{"index":0,"delta":{"content":`
		r.suffix = []byte("},\"logprobs\":null,\"finish_reason\":null}]}\n\n")
	} else {
		head += `text_completion","created":` + strconv.FormatInt(r.s.created, 10) + `,"model":` + jsonString(r.model) +
			`,"choices":[{"index":0,"text":`
		r.suffix = []byte(",\"logprobs\":null,\"finish_reason\":null}]}\n\n")
	}
	r.prefix = []byte(head)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// observe records a released token in the metrics and the summary.
func (r *run) observe(ev TokenEvent) {
	now := time.Now()
	mm := r.m.mm
	if r.emitted == 0 {
		r.first, r.firstSim = now, ev.SimTime
		mm.ttft.Observe(now.Sub(r.arrival).Seconds())
	} else {
		mm.itl.Observe(now.Sub(r.last).Seconds())
	}
	if r.fault == nil || r.fault.Kind != FaultSpike {
		mm.lag.Observe(ev.Lag.Seconds())
	}
	r.m.sum.token(r.emitted == 0, now.Sub(r.last).Seconds(), ev.SimTime-r.lastSim, ev.Lag, now)
	r.last, r.lastSim = now, ev.SimTime
	r.emitted++
}

// applyFault delays or cuts the stream before token ev; it reports false
// when the stream must end here.
func (r *run) applyFault(ev TokenEvent, flush func() error) bool {
	f := r.fault
	if f == nil {
		return true
	}
	switch f.Kind {
	case FaultSpike:
		if ev.Index == 0 {
			r.m.mm.fault(f.Kind)
			r.m.sum.fault(f.Kind)
			extra := time.Duration((f.Factor - 1) * float64(time.Since(r.arrival)))
			r.sleep(extra)
		}
	case FaultStall:
		if ev.Index == f.AfterTokens {
			r.m.mm.fault(f.Kind)
			r.m.sum.fault(f.Kind)
			r.sleep(f.stall())
		}
	case FaultCut:
		if ev.Index == f.AfterTokens {
			r.m.mm.fault(f.Kind)
			r.m.sum.fault(f.Kind)
			_ = flush()
			if r.conn != nil {
				// Close the socket under the response: the client sees the
				// stream end without [DONE] or a chunked-encoding trailer.
				_ = r.conn.Close()
			}
			return false
		}
	}
	return true
}

func (r *run) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.s.streams.Done():
	}
}

// stream writes the answer as server-sent events: the role chunk at once
// (so headers go out immediately, as vLLM does), one event per token, the
// finish chunk, the usage chunk when asked, and [DONE].
func (r *run) stream(w *bufio.Writer) {
	r.m.inflight.Add(1)
	r.m.sum.setRunning(1)
	defer func() {
		r.m.inflight.Add(-1)
		r.m.sum.setRunning(-1)
	}()
	r.chunkEnvelope()
	r.buf = append(r.buf[:0], r.prefix...)
	if r.chat {
		// Replace the content delta with the role delta for the first chunk.
		r.buf = r.buf[:len(r.buf)-len(`"content":`)]
		r.buf = append(r.buf, `"role":"assistant","content":""`...)
	} else {
		r.buf = append(r.buf, `""`...)
	}
	r.buf = append(r.buf, r.suffix...)
	if _, err := w.Write(r.buf); err != nil || w.Flush() != nil {
		r.finish("abort", StreamInfo{})
		return
	}
	cut := false
	info, err := r.m.engine.Stream(r.s.streams, r.plan, r.arrival, func(ev TokenEvent) error {
		if !r.applyFault(ev, w.Flush) {
			cut = true
			return errClientGone
		}
		r.buf = append(r.buf[:0], r.prefix...)
		r.buf = appendJSONString(r.buf, r.plan.Tokens[ev.Index])
		r.buf = append(r.buf, r.suffix...)
		if _, err := w.Write(r.buf); err != nil {
			return errClientGone
		}
		if err := w.Flush(); err != nil {
			return errClientGone
		}
		r.observe(ev)
		return nil
	})
	if err != nil || cut {
		r.finish("abort", info)
		return
	}
	r.buf = append(r.buf[:0], r.prefix...)
	if r.chat {
		r.buf = r.buf[:len(r.buf)-len(`"content":`)]
		r.buf = append(r.buf, "},\"logprobs\":null,\"finish_reason\":"...)
	} else {
		r.buf = append(r.buf, "\"\",\"logprobs\":null,\"finish_reason\":"...)
	}
	r.buf = appendJSONString(r.buf, r.plan.FinishReason)
	r.buf = append(r.buf, "}]}\n\n"...)
	if r.includeUsage {
		r.buf = append(r.buf, `data: {"id":"`...)
		r.buf = append(r.buf, r.idString()...)
		if r.chat {
			r.buf = append(r.buf, `","object":"chat.completion.chunk"`...)
		} else {
			r.buf = append(r.buf, `","object":"text_completion"`...)
		}
		r.buf = append(r.buf, `,"created":`...)
		r.buf = strconv.AppendInt(r.buf, r.s.created, 10)
		r.buf = append(r.buf, `,"model":`...)
		r.buf = appendJSONString(r.buf, r.model)
		r.buf = append(r.buf, `,"choices":[],"usage":`...)
		r.buf = r.appendUsage(r.buf, info)
		r.buf = append(r.buf, "}\n\n"...)
	}
	r.buf = append(r.buf, "data: [DONE]\n\n"...)
	_, _ = w.Write(r.buf)
	_ = w.Flush()
	r.finish(r.plan.FinishReason, info)
}

func (r *run) appendUsage(b []byte, info StreamInfo) []byte {
	p, c := r.plan.PromptTokens, r.emitted
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(c), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(p+c), 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(info.CachedTokens), 10)
	return append(b, "}}"...)
}

// unary waits out the whole answer, then writes one JSON body.
func (r *run) unary(ctx *fasthttp.RequestCtx) {
	r.m.inflight.Add(1)
	r.m.sum.setRunning(1)
	defer func() {
		r.m.inflight.Add(-1)
		r.m.sum.setRunning(-1)
	}()
	info, err := r.m.engine.Stream(r.s.streams, r.plan, r.arrival, func(ev TokenEvent) error {
		if r.fault != nil && r.fault.Kind != FaultCut {
			r.applyFault(ev, func() error { return nil })
		}
		r.text = append(r.text, r.plan.Tokens[ev.Index]...)
		r.observe(ev)
		return nil
	})
	if err != nil {
		r.finish("abort", info)
		writeError(ctx, &APIError{Status: 503, Type: "server_error", Message: "the server is shutting down"})
		return
	}
	b := append([]byte(nil), `{"id":"`...)
	b = append(b, r.idString()...)
	if r.chat {
		b = append(b, `","object":"chat.completion"`...)
	} else {
		b = append(b, `","object":"text_completion"`...)
	}
	b = append(b, `,"created":`...)
	b = strconv.AppendInt(b, r.s.created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, r.model)
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

// finish records a finished (or aborted) request.
func (r *run) finish(reason string, info StreamInfo) {
	mm := r.m.mm
	mm.success[reason].Inc()
	mm.promptTotal.Add(float64(r.plan.PromptTokens))
	mm.genTotal.Add(float64(r.emitted))
	mm.promptTok.Observe(float64(r.plan.PromptTokens))
	mm.genTok.Observe(float64(r.emitted))
	if info.Preemptions > 0 {
		mm.numPreempt.Observe(float64(info.Preemptions))
	}
	computed := info.PrefillComputed
	if computed == 0 && r.m.sched == nil {
		computed = r.plan.PromptTokens
	}
	mm.kvComputed.Observe(float64(computed))
	var server, sim requestTimes
	if r.emitted > 0 {
		server = requestTimes{
			ttft: r.first.Sub(r.arrival).Seconds(), e2e: r.last.Sub(r.arrival).Seconds(),
			queue: info.QueueTime, decode: r.last.Sub(r.first).Seconds(),
		}
		server.prefill = server.ttft - info.QueueTime
		sim = requestTimes{
			ttft: r.firstSim, e2e: r.lastSim, queue: info.QueueTime,
			prefill: r.firstSim - info.QueueTime, decode: r.lastSim - r.firstSim,
		}
		if r.emitted > 1 {
			server.tpot, server.hasTPOT = server.decode/float64(r.emitted-1), true
			sim.tpot, sim.hasTPOT = sim.decode/float64(r.emitted-1), true
		}
	}
	if r.emitted > 0 {
		mm.e2e.Observe(server.e2e)
		mm.queue.Observe(info.QueueTime)
		mm.prefill.Observe(server.prefill)
		mm.decode.Observe(server.decode)
		mm.inference.Observe(server.e2e - info.QueueTime)
		if server.hasTPOT {
			mm.tpot.Observe(server.tpot)
		}
	}
	r.m.sum.finish(reason, r.plan.PromptTokens, r.emitted, info.CachedTokens, server, sim, time.Now())
}

// appendJSONString appends s as a JSON string without allocating.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
