package server

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/kneebench/knee/simulator/sched"
	"github.com/valyala/fasthttp"
)

func (s *Server) prometheus(ctx *fasthttp.RequestCtx) {
	// The gauges are read from the engine's latest state at every scrape,
	// not only at its steps: a request aborted while the engine idles
	// would otherwise stay counted until some later step.
	for _, m := range s.models {
		if m.sched != nil {
			st := m.sched.State()
			m.mm.Running.Set(float64(st.Running))
			m.mm.Waiting.Set(float64(st.Waiting))
			m.mm.KVUsage.Set(st.KVUsage)
		}
	}
	mfs, err := s.metrics.Reg.Gather()
	if err != nil {
		writeError(ctx, &APIError{Status: 500, Type: "server_error", Message: err.Error()})
		return
	}
	writeFamilies(ctx, s.withPools(mfs))
}

// Summary is the body of GET /metrics/summary.
type Summary struct {
	Models map[string]ModelSummary `json:"models"`
	// Replica says which replica of a fleet answered.
	Replica *Replica `json:"replica,omitempty"`
}

// SummaryNow returns the current summary (for in-process use).
func (s *Server) SummaryNow() Summary {
	out := Summary{Models: map[string]ModelSummary{}, Replica: s.opts.Replica}
	for name, m := range s.models {
		ms := m.sum.Snapshot()
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
		m.sum.Reset()
		m.steps.Reset()
		if m.sched != nil {
			m.loadsAtReset.Store(m.sched.State().AdapterLoads)
		}
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
	if m.power != nil {
		m.power.step(st, time.Now())
	}
	m.mm.ObserveStep(st)
	m.steps.Observe(st, lag)
	if l := m.spec.LoRA; l != nil && m.metrics != nil {
		state := m.sched.State()
		m.metrics.SetLoRA(l.MaxLoRAs, adapterNames(l, state.RunningAdapters), adapterNames(l, state.WaitingAdapters), float64(time.Now().UnixNano())/1e9)
	}
}

func (m *model) schedulerSummary() *SchedulerSummary {
	state := m.sched.State()
	out := m.steps.Snapshot(state.Running, state.Waiting, state.KVUsage, m.schedConf.NumBlocks, m.schedConf.BlockSize)
	if m.schedConf.LoRA != nil {
		// The adapters loaded into a slot since the summary's reset.
		n := state.AdapterLoads - m.loadsAtReset.Load()
		out.AdapterLoads = &n
	}
	return out
}
