package simulator

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/kneebench/knee/simulator/sched"
	"github.com/prometheus/common/expfmt"
	"github.com/valyala/fasthttp"
)

func (s *Server) prometheus(ctx *fasthttp.RequestCtx) {
	// The gauges are read from the engine's latest state at every scrape,
	// not only at its steps: a request aborted while the engine idles
	// would otherwise stay counted until some later step.
	for _, m := range s.models {
		if m.sched != nil {
			st := m.sched.State()
			m.mm.running.Set(float64(st.Running))
			m.mm.waiting.Set(float64(st.Waiting))
			m.mm.kvUsage.Set(st.KVUsage)
		}
	}
	mfs, err := s.metrics.reg.Gather()
	if err != nil {
		writeError(ctx, &APIError{Status: 500, Type: "server_error", Message: err.Error()})
		return
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			writeError(ctx, &APIError{Status: 500, Type: "server_error", Message: err.Error()})
			return
		}
	}
	ctx.SetContentType(string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	ctx.SetBody(buf.Bytes())
}

// Summary is the body of GET /metrics/summary.
type Summary struct {
	Models map[string]ModelSummary `json:"models"`
}

// SummaryNow returns the current summary (for in-process use).
func (s *Server) SummaryNow() Summary {
	out := Summary{Models: map[string]ModelSummary{}}
	for name, m := range s.models {
		ms := m.sum.snapshot()
		if m.sched != nil {
			ms.Scheduler = m.schedulerSummary()
		}
		out.Models[name] = ms
	}
	return out
}

func (s *Server) writeSummary(ctx *fasthttp.RequestCtx) { writeJSON(ctx, 200, s.SummaryNow()) }

func (s *Server) resetSummary() {
	for _, m := range s.models {
		m.sum.reset()
		m.steps.reset()
	}
}

// adminFaults shows (GET) or replaces (POST) the fault specs. POST takes a
// FaultSpec; ?model=NAME limits it to one model.
func (s *Server) adminFaults(ctx *fasthttp.RequestCtx) {
	if ctx.IsPost() {
		var spec FaultSpec
		dec := json.NewDecoder(bytes.NewReader(ctx.PostBody()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec); err != nil {
			writeError(ctx, badRequest("", "invalid fault spec: %v", err))
			return
		}
		if err := spec.Validate(); err != nil {
			writeError(ctx, badRequest("", "invalid fault spec: %v", err))
			return
		}
		target := string(ctx.QueryArgs().Peek("model"))
		if target != "" && s.models[target] == nil {
			writeError(ctx, modelNotFound(target))
			return
		}
		for name, m := range s.models {
			if target == "" || name == target {
				m.faults.set(spec)
			}
		}
	}
	out := map[string]FaultSpec{}
	for name, m := range s.models {
		out[name] = m.faults.get()
	}
	writeJSON(ctx, 200, out)
}

// observeStep records one scheduler step (called from the step loop).
func (m *model) observeStep(st *sched.Step, lag time.Duration) {
	mm := m.mm
	mm.iterTokens.Observe(float64(st.ScheduledTokens))
	mm.stepDuration.Observe(st.Duration)
	mm.stepBatch.Observe(float64(st.BatchSize))
	if st.Compute >= st.Memory {
		mm.computeBound.Inc()
	} else {
		mm.memoryBound.Inc()
	}
	if st.Waiting > 0 || st.StopReason != sched.StopNone {
		mm.admissionStop(st.StopReason)
	}
	if n := len(st.Preempted); n > 0 {
		mm.preemptions.Add(float64(n))
	}
	if st.PrefixQueries > 0 {
		mm.prefixQueries.Add(float64(st.PrefixQueries))
		mm.prefixHits.Add(float64(st.PrefixHit))
	}
	mm.running.Set(float64(st.Running))
	mm.waiting.Set(float64(st.Waiting))
	mm.kvUsage.Set(st.KVUsage)
	ss := m.steps
	ss.mu.Lock()
	ss.steps++
	if st.Compute >= st.Memory {
		ss.compute++
	} else {
		ss.mem++
	}
	ss.batch.push(float64(st.BatchSize))
	ss.tokens.push(float64(st.ScheduledTokens))
	ss.dur.push(st.Duration)
	ss.lag.push(lag.Seconds())
	if st.Waiting > 0 || st.StopReason != sched.StopNone {
		ss.stops[st.StopReason]++
	}
	ss.preempt += int64(len(st.Preempted))
	ss.queries += int64(st.PrefixQueries)
	ss.hit += int64(st.PrefixHit)
	ss.mu.Unlock()
}

func (m *model) schedulerSummary() *SchedulerSummary {
	ss := m.steps
	state := m.sched.State()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := &SchedulerSummary{
		Steps: ss.steps, ComputeBound: ss.compute, MemoryBound: ss.mem,
		BatchSize: ss.batch.stats(), ScheduledTokens: ss.tokens.stats(), StepDuration: ss.dur.stats(), StepLag: ss.lag.stats(),
		AdmissionStops: map[string]int64{}, Preemptions: ss.preempt, PrefixQueries: ss.queries, PrefixHits: ss.hit,
		Running: state.Running, Waiting: state.Waiting, KVUsage: state.KVUsage,
		NumBlocks: m.schedConf.NumBlocks, BlockSize: m.schedConf.BlockSize,
	}
	for k, v := range ss.stops {
		out.AdmissionStops[k] = v
	}
	if ss.queries > 0 {
		out.PrefixHitRate = float64(ss.hit) / float64(ss.queries)
	}
	return out
}
