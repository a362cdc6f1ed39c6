package server

import (
	"encoding/json"
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
	h            *handler
	arrival      time.Time
	chat         bool
	model        string
	id           int64
	includeUsage bool
	first        time.Time
	firstSim     float64
	text         []byte
	// store asks for a Responses API answer's conversation (messages and
	// the answer) to be kept; resp is its stream's state.
	store    bool
	messages []Message
	resp     *respStream
	// inputs are a pooled request's texts; docs and topN are a query's
	// against documents.
	inputs []string
	docs   []string
	topN   int
	// pack is a stream interval's group held for one event (pack.go).
	pack packed
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
			r.sleep(f.Stall())
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

// sendAt is how much a stream may hold back for grouping before it sends
// anyway: tokens already due together share a write, but an instant answer
// of many thousand tokens must not sit in memory whole.
const sendAt = 4096

// stream writes a generating kind's answer as server-sent events, through
// its streamAnswer: what goes before the first token at once (so headers
// go out immediately, as vLLM does), one event per token, and the end.
// Events gather in r.buf and leave in one send whenever nothing more is
// already due.
func (r *run) stream(send sendFunc) {
	defer r.running()()
	a := r.h.answer.(streamAnswer)
	r.buf = make([]byte, chunkRoom, 512)
	flush := func() error {
		if len(r.buf) == chunkRoom {
			return nil
		}
		err := send(r.buf)
		r.buf = r.buf[:chunkRoom]
		return err
	}
	a.open(r)
	// An instant answer is due as a whole, so what opens it goes out with
	// it; any other waits for its first token, and the headers must not.
	if _, instant := r.m.engine.(Instant); !instant {
		if err := flush(); err != nil {
			r.finish("abort", StreamInfo{})
			return
		}
	}
	cut := false
	info, err := r.m.engine.Stream(r.s.streams, r.plan, r.arrival, func(ev TokenEvent) error {
		if cut = !r.applyFault(ev, flush); cut {
			return errClientGone
		}
		if r.hold(ev) {
			return nil
		}
		e := r.tokenEvents(a, ev.Index)
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
			a.shutdown(r)
		}
		_ = flush()
		r.finish("abort", info)
		return
	}
	a.close(r, info)
	_ = flush()
	r.finish(r.plan.FinishReason, info)
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
	pooled := r.h.kind.Pooled()
	if pooled {
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
	if pooled && r.emitted > 0 {
		gen = telemetry.Pooled
	}
	r.m.sum.Finish(reason, r.plan.PromptTokens, gen, info.CachedTokens, server, sim, time.Now())
	r.m.phasesFinished(info.Phases, r.plan.PromptTokens, gen, reason)
}
