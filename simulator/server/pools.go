package server

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/simulator/telemetry"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/valyala/fasthttp"
	"google.golang.org/protobuf/proto"
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

// setPoolGauges reads a disaggregated model's pools' gauges from the
// engine's latest state.
func (m *model) setPoolGauges() {
	for role, p := range m.pools {
		st := m.sched.PoolState(sched.Role(role))
		p.MM.Running.Set(float64(st.Running))
		p.MM.Waiting.Set(float64(st.Waiting))
		p.MM.KVUsage.Set(st.KVUsage)
	}
}

// poolPrometheus writes every disaggregated model's pool of role, its
// gauges read from the engine's latest state.
func (s *Server) poolPrometheus(ctx *fasthttp.RequestCtx, role sched.Role) {
	var mfs []*dto.MetricFamily
	for _, m := range s.models {
		p := m.pools[role]
		if p == nil {
			continue
		}
		m.setPoolGauges()
		fams, err := p.Reg.Gather()
		if err != nil {
			writeError(ctx, &APIError{Status: 500, Type: "server_error", Message: err.Error()})
			return
		}
		mfs = mergeFamilies(mfs, fams)
	}
	if mfs == nil {
		writeError(ctx, &APIError{Status: 404, Type: "not_found_error", Code: "not_found",
			Message: fmt.Sprintf("no route for /metrics/%s: no model here is served disaggregated", role)})
		return
	}
	writeFamilies(ctx, mfs)
}

// withPools is /metrics with each disaggregated model's series by pool,
// a role label on each, as a P/D deployment's engines publish theirs
// and its scraper labels them (llm-d's pods carry their role): the
// pools' series stand in for the model's own of the same name. As over a
// real deployment's pods, a request counts in both pools (the prefill
// engine answered its one token): select a role to count requests.
func (s *Server) withPools(mfs []*dto.MetricFamily) []*dto.MetricFamily {
	pd := map[string]bool{}
	var pools []*dto.MetricFamily
	for name, m := range s.models {
		if m.pools[0] == nil {
			continue
		}
		pd[name] = true
		m.setPoolGauges()
		for role, p := range m.pools {
			fams, err := p.Reg.Gather()
			if err != nil {
				continue
			}
			for _, f := range fams {
				for _, x := range f.Metric {
					x.Label = append(x.Label, &dto.LabelPair{Name: proto.String("role"), Value: proto.String(sched.Role(role).String())})
				}
			}
			pools = mergeFamilies(pools, fams)
		}
	}
	if len(pd) == 0 {
		return mfs
	}
	byName := map[string]bool{}
	for _, f := range pools {
		byName[f.GetName()] = true
	}
	for _, f := range mfs {
		if byName[f.GetName()] {
			f.Metric = slices.DeleteFunc(f.Metric, func(x *dto.Metric) bool { return pd[modelOf(x)] })
		}
	}
	return mergeFamilies(mfs, pools)
}

// modelOf is a series' model_name label.
func modelOf(x *dto.Metric) string {
	for _, l := range x.Label {
		if l.GetName() == "model_name" {
			return l.GetValue()
		}
	}
	return ""
}

// mergeFamilies adds b's families to a, a family of a name already in a
// giving its series to it, in name order.
func mergeFamilies(a, b []*dto.MetricFamily) []*dto.MetricFamily {
	at := map[string]*dto.MetricFamily{}
	for _, f := range a {
		at[f.GetName()] = f
	}
	for _, f := range b {
		if have := at[f.GetName()]; have != nil {
			have.Metric = append(have.Metric, f.Metric...)
			continue
		}
		at[f.GetName()] = f
		a = append(a, f)
	}
	slices.SortFunc(a, func(x, y *dto.MetricFamily) int { return strings.Compare(x.GetName(), y.GetName()) })
	return a
}

// writeFamilies writes families in Prometheus's text format.
func writeFamilies(ctx *fasthttp.RequestCtx, mfs []*dto.MetricFamily) {
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
