package server

import (
	"bytes"
	"fmt"
	"time"

	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/simulator/telemetry"
	"github.com/prometheus/common/expfmt"
	"github.com/valyala/fasthttp"
)

// poolRoutes are a disaggregated model's pools' own metrics pages, as a
// P/D deployment's prefill and decode engines each publish theirs (knee's
// --server-metrics-url prefill=URL,decode=URL reads them).
var poolRoutes = map[string]sched.Role{"/metrics/prefill": sched.RolePrefill, "/metrics/decode": sched.RoleDecode}

func init() {
	for path, role := range poolRoutes {
		routes[path] = route{method: fasthttp.MethodGet, serve: func(s *Server, ctx *fasthttp.RequestCtx, _ string) { s.poolPrometheus(ctx, role) }}
	}
}

// serveDisaggregated starts m's engine as a disaggregated model's, each
// pool's steps and requests in its own metrics as well as the model's.
func (s *Server) serveDisaggregated(m *model, dc sched.DisaggConfig) {
	m.power = nil // a meter of one replica's GPUs: not yet of two pools
	for _, role := range []sched.Role{sched.RolePrefill, sched.RoleDecode} {
		m.pools[role] = telemetry.NewPoolMetrics(m.spec.Name, m.spec.ContextLength, role)
	}
	m.sched = engine.NewDisaggScheduler(dc, func(role sched.Role, st *sched.Step, lag time.Duration) {
		m.observeStep(st, lag)
		m.pools[role].MM.ObserveStep(st)
	})
}

// phasesFinished records a disaggregated model's finished request's
// phases (nil for any other model's) in its summary and on both pools'
// metrics.
func (m *model) phasesFinished(ph *sched.Phases, prompt, generated int, reason string) {
	if ph == nil || generated <= 0 || m.pools[0] == nil {
		return
	}
	m.sum.Phases(*ph)
	for role, p := range m.pools {
		p.Finished(sched.Role(role), *ph, prompt, generated, reason)
	}
}

// poolPrometheus writes every disaggregated model's pool of role, its
// gauges read from the engine's latest state.
func (s *Server) poolPrometheus(ctx *fasthttp.RequestCtx, role sched.Role) {
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	served := false
	for _, m := range s.models {
		p := m.pools[role]
		if p == nil {
			continue
		}
		served = true
		st := m.sched.PoolState(role)
		p.MM.Running.Set(float64(st.Running))
		p.MM.Waiting.Set(float64(st.Waiting))
		p.MM.KVUsage.Set(st.KVUsage)
		mfs, err := p.Reg.Gather()
		for _, mf := range mfs {
			if err == nil {
				err = enc.Encode(mf)
			}
		}
		if err != nil {
			writeError(ctx, &APIError{Status: 500, Type: "server_error", Message: err.Error()})
			return
		}
	}
	if !served {
		writeError(ctx, &APIError{Status: 404, Type: "not_found_error", Code: "not_found",
			Message: fmt.Sprintf("no route for /metrics/%s: no model here is served disaggregated", role)})
		return
	}
	ctx.SetContentType(string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	ctx.SetBody(buf.Bytes())
}
