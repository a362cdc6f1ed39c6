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
		// What the pool's account is checked against: the client's
		// requests, not its slices, which the pools' samples must not fill.
		one := results.Run{Stats: res.Stats, Config: res.Config, Requests: res.Requests, Tokens: res.Tokens,
			Calls: res.Calls, Shard: res.Shard, MergedShards: res.MergedShards}
		v.Fill(&one)
		res.Pools[p.roles[i]] = one.Server
		for _, w := range one.Warnings {
			res.Warnings = append(res.Warnings, p.roles[i]+" pool: "+w)
		}
	}
	res.Phases = p.phases()
}

// A phaseSource is where a phase is read: a pool's histogram (of one
// stage, where the family holds several), in seconds times scale.
type phaseSource struct {
	role, metric, stage string
	scale               float64
}

// phaseSources are where each engine's P/D deployment publishes each
// phase, in results.PhaseNames' order ("" where it publishes none).
// vLLM: each pool's queue and prefill times and the decode side's NIXL
// transfers; its decode engine schedules a request before its KV
// arrives, so its prefill time holds the transfer, taken out after.
// SGLang: each pool's queue time, the prefill pool's prefill_forward
// stage and its KV transfers (in ms); it times no first decode step.
var phaseSources = map[string][]phaseSource{
	"vllm": {
		{"prefill", "vllm:request_queue_time_seconds", "", 1}, {"prefill", "vllm:request_prefill_time_seconds", "", 1},
		{"decode", "vllm:nixl_xfer_time_seconds", "", 1}, {"decode", "vllm:request_queue_time_seconds", "", 1},
		{"decode", "vllm:request_prefill_time_seconds", "", 1},
	},
	"sglang": {
		{"prefill", "sglang:queue_time_seconds", "", 1}, {"prefill", "sglang:per_stage_req_latency_seconds", "prefill_forward", 1},
		{"prefill", "sglang:kv_transfer_latency_ms", "", 0.001}, {"decode", "sglang:queue_time_seconds", "", 1},
		{},
	},
}

// phases is the time to first token by phase over the window, each a
// histogram's exact mean and its bucket-estimated percentiles; a phase
// whose histogram the pool does not publish (llm-d-inference-sim times no
// queue and no transfer) is left empty and named in Unpublished. It is
// nil when either pool's page is missing, the pools' engines differ, or
// no phase is published.
func (p *Pools) phases() *results.Phases {
	views := map[string]*View{}
	kind := ""
	for i, v := range p.views {
		if v.before != nil && v.after != nil && (kind == "" || v.kind == kind) {
			views[p.roles[i]], kind = v, v.kind
		}
	}
	srcs := phaseSources[kind]
	if len(views) < 2 || srcs == nil {
		return nil
	}
	out := &results.Phases{Source: kind, Estimate: true}
	for i, s := range out.All() {
		src := srcs[i]
		if src.metric == "" {
			continue
		}
		v := views[src.role]
		sel := v.sel()
		sel.stage = src.stage
		a, ok := v.after.histogram(sel, src.metric)
		if !ok {
			out.Unpublished = append(out.Unpublished, results.PhaseNames[i])
			continue
		}
		b, _ := v.before.histogram(sel, src.metric)
		h, _ := a.delta(b)
		*s = summaryOf(h, src.scale)
	}
	if kind == "vllm" {
		// The decode engine's prefill time less the transfer it held:
		// exact for the means, which add; no percentile of a difference
		// can be read from two histograms, so it has none. Without the
		// transfer's own histogram the two cannot be told apart.
		fs := &out.FirstStep
		switch {
		case out.Transfer.Count > 0:
			*fs = results.Summary{Count: fs.Count, Mean: max(fs.Mean-out.Transfer.Mean, 0)}
		case fs.Count > 0:
			*fs = results.Summary{}
			out.Unpublished = append(out.Unpublished, results.PhaseNames[4])
		}
	}
	if len(out.Unpublished) == len(out.All()) {
		return nil
	}
	return out
}

// summaryOf is a histogram's window in milliseconds, its values in
// seconds times scale: its exact mean and count, its percentiles
// interpolated within their buckets.
func summaryOf(h bucketCounts, scale float64) results.Summary {
	s := results.Summary{Count: int64(h.count)}
	if m, ok := h.mean(); ok {
		s.Mean = m * 1000 * scale
	}
	for _, q := range []struct {
		q float64
		v *float64
	}{{0.5, &s.P50}, {0.9, &s.P90}, {0.95, &s.P95}, {0.99, &s.P99}} {
		if x, ok := h.quantile(q.q); ok {
			*q.v = x * 1000 * scale
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
