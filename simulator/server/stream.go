package server

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/kneebench/knee/simulator/telemetry"
)

// run is one request being answered.
type run struct {
	// What every token reads or writes comes first, together.
	m       *model
	plan    *Plan
	fault   *FaultRule
	emitted int
	last    time.Time
	lastSim float64
	buf     []byte // events held back to share a write
	event   []byte // one token's event; starts with prefix, kept there
	prefix  []byte
	suffix  string
	// thinking is how many of the answer's first tokens are thought,
	// streamed in thinkEvent after thinkPrefix (reasoning.go).
	thinking    int
	thinkEvent  []byte
	thinkPrefix []byte
	reasoning   *ReasoningSpec
	// toolFirst and toolPrefix open a call's first and later argument
	// pieces' events (tools.go).
	toolFirst, toolPrefix, toolEvent []byte

	s            *Server
	arrival      time.Time
	chat         bool
	model        string
	id           int64
	includeUsage bool
	generate     bool
	first        time.Time
	firstSim     float64
	text         []byte
	// responses marks a Responses API answer: store asks for its
	// conversation (messages and the answer) to be kept.
	responses bool
	store     bool
	messages  []Message
	// pooled marks an embeddings or rerank answer, inputs its texts;
	// docs and topN are a rerank's.
	pooled bool
	inputs []string
	docs   []string
	topN   int
	scores bool
}

func (r *run) idString() string {
	if r.chat {
		return "chatcmpl-knee-" + strconv.FormatInt(r.id, 10)
	}
	return "cmpl-knee-" + strconv.FormatInt(r.id, 10)
}

// The bytes after a token's text close its event. They are constants, not
// per-request copies: read on every token of every stream, one shared copy
// stays in the cache.
const (
	chatSuffix = "},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
	textSuffix = ",\"logprobs\":null,\"finish_reason\":null}]}\n\n"
)

// chunkEnvelope builds the bytes around a token, once per request, so the
// per-token path only escapes the token itself.
func (r *run) chunkEnvelope() {
	head := `data: {"id":"` + r.idString() + `","object":"`
	if r.chat {
		head += `chat.completion.chunk","created":` + strconv.FormatInt(r.s.created, 10) + `,"model":` + jsonString(r.model) +
			`,"choices":[{"index":0,"delta":{"content":`
		r.suffix = chatSuffix
	} else {
		head += `text_completion","created":` + strconv.FormatInt(r.s.created, 10) + `,"model":` + jsonString(r.model) +
			`,"choices":[{"index":0,"text":`
		r.suffix = textSuffix
	}
	r.prefix = []byte(head)
	// Both buffers keep chunkRoom free in front for the chunk's size line.
	r.event = append(make([]byte, chunkRoom, chunkRoom+len(head)+len(r.suffix)+64), head...)
	r.buf = make([]byte, chunkRoom, 512)
	r.thinkEnvelope()
	r.toolEnvelope()
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
		mm.TTFT.Observe(now.Sub(r.arrival).Seconds())
	} else {
		mm.ITL.Observe(now.Sub(r.last).Seconds())
	}
	if r.fault == nil || r.fault.Kind != FaultSpike {
		mm.Lag.Observe(ev.Lag.Seconds())
	}
	r.m.sum.Token(r.emitted == 0, now.Sub(r.last).Seconds(), ev.SimTime-r.lastSim, ev.Lag, now)
	r.last, r.lastSim = now, ev.SimTime
	r.emitted++
}

// applyFault delays or cuts the stream before token ev; it reports false
// when the stream must end here. Whatever was held back for sending with
// ev goes out first: the engine said ev was due, not that it would be
// delayed.
func (r *run) applyFault(ev TokenEvent, flush func() error) bool {
	f := r.fault
	if f == nil {
		return true
	}
	switch f.Kind {
	case FaultSpike:
		if ev.Index == 0 {
			r.m.mm.Fault(f.Kind)
			r.m.sum.Fault(f.Kind)
			_ = flush()
			extra := time.Duration((f.Factor - 1) * float64(time.Since(r.arrival)))
			r.sleep(extra)
		}
	case FaultStall:
		if ev.Index == f.AfterTokens {
			r.m.mm.Fault(f.Kind)
			r.m.sum.Fault(f.Kind)
			_ = flush()
			r.sleep(f.stall())
		}
	case FaultCut:
		if ev.Index == f.AfterTokens {
			r.m.mm.Fault(f.Kind)
			r.m.sum.Fault(f.Kind)
			_ = flush()
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

// shutdownEvent ends a stream cut by the end of a shutdown's grace.
const shutdownEvent = "data: {\"error\":{\"message\":\"the server is shutting down\",\"type\":\"server_error\",\"param\":null,\"code\":\"service_unavailable\"}}\n\n"

// running counts the request as running until the returned func is called.
func (r *run) running() (done func()) {
	r.m.inflight.Add(1)
	r.m.sum.SetRunning(1)
	return func() {
		r.m.inflight.Add(-1)
		r.m.sum.SetRunning(-1)
	}
}

// tokenEvent formats one token's event in r.event and returns it, with
// chunkRoom free in front. The event buffer keeps its prefix from token to
// token, so only the token and the suffix are copied in.
func (r *run) tokenEvent(tok string) []byte {
	e := appendJSONString(r.event[:chunkRoom+len(r.prefix)], tok)
	e = append(e, r.suffix...)
	r.event = e
	return e
}

// sendAt is how much a stream may hold back for grouping before it sends
// anyway: tokens already due together share a write, but an instant answer
// of many thousand tokens must not sit in memory whole.
const sendAt = 4096

// stream writes the answer as server-sent events: the role chunk at once
// (so headers go out immediately, as vLLM does), one event per token, the
// finish chunk, the usage chunk when asked, and [DONE]. Events gather in
// r.buf and leave in one send whenever nothing more is already due.
func (r *run) stream(send sendFunc) {
	defer r.running()()
	flush := func() error {
		if len(r.buf) == chunkRoom {
			return nil
		}
		err := send(r.buf)
		r.buf = r.buf[:chunkRoom]
		return err
	}
	r.chunkEnvelope()
	r.buf = append(r.buf, r.prefix...)
	if r.chat {
		// Replace the content delta with the role delta for the first chunk.
		r.buf = r.buf[:len(r.buf)-len(`"content":`)]
		r.buf = append(r.buf, `"role":"assistant","content":""`...)
	} else {
		r.buf = append(r.buf, `""`...)
	}
	r.buf = append(r.buf, r.suffix...)
	// An instant answer is due as a whole, so its role chunk goes out with
	// it; any other waits for its first token, and the headers must not.
	if _, instant := r.m.engine.(Instant); !instant {
		if err := flush(); err != nil {
			r.finish("abort", StreamInfo{})
			return
		}
	}
	cut := false
	info, err := r.m.engine.Stream(r.s.streams, r.plan, r.arrival, func(ev TokenEvent) error {
		if !r.applyFault(ev, flush) {
			cut = true
			return errClientGone
		}
		var e []byte
		switch {
		case ev.Index < r.thinking:
			e = r.thinkTokenEvent(r.plan.Tokens[ev.Index])
		case r.plan.ToolName != "" && r.chat:
			e = r.toolTokenEvent(r.plan.Tokens[ev.Index], ev.Index == r.thinking)
		default:
			e = r.tokenEvent(r.plan.Tokens[ev.Index])
		}
		var err error
		switch {
		case !ev.More && len(r.buf) == chunkRoom:
			err = send(e)
		default:
			// Tokens already due together go out in one write: one
			// system call instead of several, and none of them waits.
			r.buf = append(r.buf, e[chunkRoom:]...)
			if !ev.More || len(r.buf) >= chunkRoom+sendAt {
				err = flush()
			}
		}
		if err != nil {
			return errClientGone
		}
		r.observe(ev)
		return nil
	})
	if err != nil || cut {
		if err != nil && r.s.streams.Err() != nil {
			// The shutdown grace ran out with this stream open: say so in
			// the stream before the connection closes, so the client can
			// tell a shutdown from a network failure.
			r.buf = append(r.buf, shutdownEvent...)
		}
		_ = flush()
		r.finish("abort", info)
		return
	}
	r.buf = append(r.buf, r.prefix...)
	if r.chat {
		r.buf = r.buf[:len(r.buf)-len(`"content":`)]
		r.buf = append(r.buf, "},\"logprobs\":null,\"finish_reason\":"...)
	} else {
		r.buf = append(r.buf, "\"\",\"logprobs\":null,\"finish_reason\":"...)
	}
	r.buf = appendJSONString(r.buf, r.plan.FinishReason)
	r.buf = append(r.buf, "}]}\n\n"...)
	if r.includeUsage {
		r.buf = append(r.buf, "data: "...)
		r.buf = r.appendHead(r.buf, "chat.completion.chunk")
		r.buf = append(r.buf, `,"choices":[],"usage":`...)
		r.buf = r.appendUsage(r.buf, info)
		r.buf = append(r.buf, "}\n\n"...)
	}
	r.buf = append(r.buf, "data: [DONE]\n\n"...)
	_ = flush()
	r.finish(r.plan.FinishReason, info)
}

// appendHead opens a response object: id, object, created and model. The
// chat object name is given; completions always use text_completion.
func (r *run) appendHead(b []byte, chatObject string) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, r.idString()...)
	b = append(b, `","object":"`...)
	if r.chat {
		b = append(b, chatObject...)
	} else {
		b = append(b, "text_completion"...)
	}
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, r.s.created, 10)
	b = append(b, `,"model":`...)
	return appendJSONString(b, r.model)
}

func (r *run) appendUsage(b []byte, info StreamInfo) []byte {
	p, c := r.plan.PromptTokens, r.emitted
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(c), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(p+c), 10)
	b = r.appendReasoningUsage(b)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(info.CachedTokens), 10)
	return append(b, "}}"...)
}

// finish records a finished (or aborted) request.
func (r *run) finish(reason string, info StreamInfo) {
	if reason == "tool_calls" {
		// The engine stopped as at any end of sequence: vLLM's metrics
		// count a call's answer among finished_reason "stop".
		reason = "stop"
	}
	mm := r.m.mm
	gen := r.emitted
	if r.pooled {
		// The pooled result is no generated token.
		gen = 0
	}
	mm.Success[reason].Inc()
	mm.PromptTotal.Add(float64(r.plan.PromptTokens))
	mm.GenTotal.Add(float64(gen))
	mm.PromptTok.Observe(float64(r.plan.PromptTokens))
	mm.GenTok.Observe(float64(gen))
	if info.Preemptions > 0 {
		mm.NumPreempt.Observe(float64(info.Preemptions))
	}
	computed := info.PrefillComputed
	if computed == 0 && r.m.sched == nil {
		computed = r.plan.PromptTokens
	}
	mm.KVComputed.Observe(float64(computed))
	var server, sim telemetry.RequestTimes
	if r.emitted > 0 {
		server = telemetry.RequestTimes{
			TTFT: r.first.Sub(r.arrival).Seconds(), E2E: r.last.Sub(r.arrival).Seconds(),
			Queue: info.QueueTime, Decode: r.last.Sub(r.first).Seconds(),
		}
		server.Prefill = server.TTFT - info.QueueTime
		sim = telemetry.RequestTimes{
			TTFT: r.firstSim, E2E: r.lastSim, Queue: info.QueueTime,
			Prefill: r.firstSim - info.QueueTime, Decode: r.lastSim - r.firstSim,
		}
		if r.emitted > 1 {
			server.TPOT, server.HasTPOT = server.Decode/float64(r.emitted-1), true
			sim.TPOT, sim.HasTPOT = sim.Decode/float64(r.emitted-1), true
		}
	}
	if r.emitted > 0 {
		mm.E2E.Observe(server.E2E)
		mm.Queue.Observe(info.QueueTime)
		mm.Prefill.Observe(server.Prefill)
		mm.Decode.Observe(server.Decode)
		mm.Inference.Observe(server.E2E - info.QueueTime)
		if server.HasTPOT {
			mm.TPOT.Observe(server.TPOT)
		}
	}
	if r.pooled && r.emitted > 0 {
		gen = telemetry.Pooled
	}
	r.m.sum.Finish(reason, r.plan.PromptTokens, gen, info.CachedTokens, server, sim, time.Now())
}
