package serverview

import (
	"context"
	"fmt"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
)

// Roles are the pools of a disaggregated deployment whose metrics a run
// may read, in the order they are reported.
var Roles = []string{"prefill", "decode"}

// Pools watches a disaggregated deployment's pools, each at its own
// metrics URL (--server-metrics-url prefill=URL,decode=URL): each pool's
// account of the window, and from vLLM's names the time to first token
// by phase.
type Pools struct {
	roles []string
	views []*View
}

// NewPools reads each role's page once, refusing a page that publishes
// no engine's metrics: a run must not measure a window it cannot
// explain.
func NewPools(t transport.Target, urls map[string]string) (*Pools, error) {
	p := &Pools{}
	for _, role := range Roles {
		url, ok := urls[role]
		if !ok {
			continue
		}
		v := New(t, url)
		if v.kind != "vllm" && v.kind != "sglang" {
			why := v.note
			if why == "" {
				why = "it publishes " + v.kind + " metrics, not a vLLM or SGLang engine's"
			}
			return nil, fmt.Errorf("the %s pool's metrics (%s): %s", role, results.RedactURL(url), why)
		}
		p.roles, p.views = append(p.roles, role), append(p.views, v)
	}
	return p, nil
}

// Start implements bench.Watcher.
func (p *Pools) Start(ctx context.Context) {
	for _, v := range p.views {
		v.Start(ctx)
	}
}

// End implements bench.Watcher.
func (p *Pools) End(ctx context.Context) {
	for _, v := range p.views {
		v.End(ctx)
	}
}

// Fill implements bench.Watcher: each pool's account as the server view
// of a run against it alone, and the phases where the engines name them.
func (p *Pools) Fill(res *results.Run) {
	res.Pools = map[string]*results.Server{}
	for i, v := range p.views {
		one := results.Run{Stats: res.Stats, Config: res.Config}
		v.Fill(&one)
		res.Pools[p.roles[i]] = one.Server
		for _, w := range one.Warnings {
			res.Warnings = append(res.Warnings, p.roles[i]+" pool: "+w)
		}
	}
	res.Phases = p.phases()
}

// phaseSources are where each phase is read, as vLLM's engines of a P/D
// deployment publish them: each pool's queue and prefill times, and the
// decode side's NIXL transfers. The decode engine schedules a request
// before its KV arrives, so its prefill time holds the transfer, which
// is taken out.
var phaseSources = []struct {
	role, metric string
}{
	{"prefill", "vllm:request_queue_time_seconds"}, {"prefill", "vllm:request_prefill_time_seconds"},
	{"decode", "vllm:nixl_xfer_time_seconds"}, {"decode", "vllm:request_queue_time_seconds"},
	{"decode", "vllm:request_prefill_time_seconds"},
}

// phases is the time to first token by phase over the window, each a
// histogram's exact mean and its bucket-estimated percentiles; nil when
// either pool's page is missing or names none of them.
func (p *Pools) phases() *results.Phases {
	views := map[string]*View{}
	for i, v := range p.views {
		if v.kind == "vllm" && v.before != nil && v.after != nil {
			views[p.roles[i]] = v
		}
	}
	if len(views) < 2 {
		return nil
	}
	out := &results.Phases{Source: "vllm", Estimate: true}
	hs := make([]bucketCounts, len(phaseSources))
	for i, src := range phaseSources {
		v := views[src.role]
		a, ok := v.after.histogram(v.sel(), src.metric)
		if !ok {
			return nil
		}
		b, _ := v.before.histogram(v.sel(), src.metric)
		hs[i], _ = a.delta(b)
	}
	for i, s := range out.All() {
		*s = summaryOf(hs[i])
	}
	// The decode engine's prefill time less the transfer it held: exact
	// for the means, which add; no percentile of a difference can be
	// read from two histograms, so it has none.
	fs := &out.FirstStep
	*fs = results.Summary{Count: fs.Count, Mean: max(fs.Mean-out.Transfer.Mean, 0)}
	return out
}

// summaryOf is a histogram's window in milliseconds: its exact mean and
// count, its percentiles interpolated within their buckets.
func summaryOf(h bucketCounts) results.Summary {
	s := results.Summary{Count: int64(h.count)}
	if m, ok := h.mean(); ok {
		s.Mean = m * 1000
	}
	for _, q := range []struct {
		q float64
		v *float64
	}{{0.5, &s.P50}, {0.9, &s.P90}, {0.95, &s.P95}, {0.99, &s.P99}} {
		if x, ok := h.quantile(q.q); ok {
			*q.v = x * 1000
		}
	}
	return s
}

// Watcher is what a view of the server does over a window (as
// bench.Watcher): one View, or Pools.
type Watcher interface {
	Start(ctx context.Context)
	End(ctx context.Context)
	Fill(res *results.Run)
}

// Detect is the server's view: a disaggregated deployment's pools when
// the one metrics page labels the model's vLLM series by role (a
// router's or a scraper's page, or knee sim's /metrics for a
// disaggregated model), else the one view New makes.
func Detect(t transport.Target, metricsURL string) Watcher {
	v := New(t, metricsURL)
	if v.kind != "vllm" {
		return v
	}
	s, _ := v.fetch()
	roles := map[string]bool{}
	for _, m := range s["vllm:num_requests_running"].GetMetric() {
		if !matches(m, selector{model: t.Model}) {
			continue
		}
		for _, l := range m.Label {
			if l.GetName() == "role" {
				roles[l.GetValue()] = true
			}
		}
	}
	if !roles["prefill"] || !roles["decode"] {
		return v
	}
	p := &Pools{}
	for _, role := range Roles {
		pv := New(t, v.metricsURL)
		pv.role = role
		p.roles, p.views = append(p.roles, role), append(p.views, pv)
	}
	return p
}
