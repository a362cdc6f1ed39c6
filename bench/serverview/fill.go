package serverview

import (
	"math"
	"strings"

	"github.com/kneebench/knee/results"
)

func ptr(v float64) *float64 { return &v }

// figure builds a comparison row from exact values; delivery is client −
// server.
func figure(name string, client, server, simulated *float64) results.Figure {
	f := results.Figure{Name: name, Client: client, Server: server, Simulated: simulated}
	f.SetDelivery()
	return f
}

// bucketFigure builds a comparison row for a percentile that the server
// only knows to lie in the bucket (lo, hi]. Server is the point
// interpolated inside the bucket, shown as an estimate; it is left out for
// the +Inf bucket. A delivery figure is given only where the bucket is
// narrower than the difference it would show: otherwise the client's
// value may sit anywhere the server's could, and a number would be noise
// dressed as a measurement.
func bucketFigure(name string, client *float64, lo, hi, point float64) results.Figure {
	f := results.Figure{Name: name, Client: client, ServerLow: ptr(lo * 1000), Estimate: true}
	if math.IsInf(hi, 1) {
		return f
	}
	f.ServerHigh, f.Server = ptr(hi*1000), ptr(point*1000)
	f.SetDelivery()
	return f
}

// Fill adds the server's account to a run's result.
func (v *View) Fill(res *results.Run) {
	defer pooledFigures(res)
	v.fillSlices(res)
	switch {
	case v.kind == "knee-sim" && v.sim != nil:
		v.fillSim(res)
		res.JudgeHost()
	case (v.kind == "vllm" || v.kind == "sglang" || v.kind == "llamacpp") && v.before != nil && v.after != nil:
		v.fillProm(res)
	default:
		note := v.note
		if note == "" && v.scrapeErr != "" {
			note = "server metrics not available: " + v.scrapeErr
		}
		switch {
		case note != "":
		case res.Interrupted:
			note = "server metrics not read: a signal stopped the run before the window's end, when they are read"
		case v.kind != "" && v.after == nil && v.sim == nil:
			note = "server metrics not read: the window did not reach its end, when they are read"
		default:
			note = "server metrics not available: the server answered neither /metrics/summary nor /metrics in a form knee reads"
		}
		res.Warnings = append(res.Warnings, note)
	}
}

func (v *View) fillSim(res *results.Run) {
	m := v.sim
	s := &results.Server{Source: "knee-sim", Requests: m.Requests.Total, PromptTokens: m.Tokens.Prompt,
		OutputTokens: m.Tokens.Generated}
	ms := func(x float64) *float64 { return ptr(x * 1000) }
	st := res.Stats
	srv, sim := m.Server, m.Simulated
	s.Figures = []results.Figure{
		figure("TTFT p50", ptr(st.TTFT.P50), ms(srv["ttft"].P50), ms(sim["ttft"].P50)),
		figure("TTFT p99", ptr(st.TTFT.P99), ms(srv["ttft"].P99), ms(sim["ttft"].P99)),
		figure("ITL p50", ptr(st.ITL.P50), ms(srv["itl"].P50), ms(sim["itl"].P50)),
		figure("ITL p99", ptr(st.ITL.P99), ms(srv["itl"].P99), ms(sim["itl"].P99)),
		figure("TPOT p50", ptr(st.TPOT.P50), ms(srv["tpot"].P50), ms(sim["tpot"].P50)),
		figure("E2E p50", ptr(st.E2E.P50), ms(srv["e2e"].P50), ms(sim["e2e"].P50)),
		figure("E2E p99", ptr(st.E2E.P99), ms(srv["e2e"].P99), ms(sim["e2e"].P99)),
	}
	// The server's rate over its own interval, from its reset to its
	// answer: a rate over the client's window would only restate the
	// client's, whatever the server did.
	if span := m.At.Sub(m.Since).Seconds(); !m.At.IsZero() && !m.Since.IsZero() && span > 0 {
		s.Figures = append(s.Figures, figure("output tok/s", ptr(res.Throughput.OutputTokensPerS),
			ptr(float64(m.Tokens.Generated)/span), nil))
	}
	s.Lag = m.Lag.ms()
	if len(m.Phases) > 0 {
		ph := &results.Phases{Source: "knee-sim"}
		for i, p := range ph.All() {
			*p = *m.Phases[results.PhaseNames[i]].ms()
		}
		res.Phases = ph
	}
	if sc := m.Scheduler; sc != nil {
		s.Preemptions = sc.Preemptions
		if sc.PrefixQueries > 0 {
			s.PrefixHitRate = ptr(sc.PrefixHitRate)
		}
	}
	v.mu.Lock()
	s.LoRA = v.lora
	v.mu.Unlock()
	if sc := m.Scheduler; sc != nil && sc.AdapterLoads != nil {
		// The simulator counts its adapter loads; vLLM publishes none.
		if s.LoRA == nil {
			s.LoRA = &results.ServerLoRA{}
		}
		s.LoRA.Loads = sc.AdapterLoads
	}
	if s.CheckTraffic(res, v.simReqs, true) {
		s.DropDelivery()
	}
	res.Server = s
}

// ms is the summary in milliseconds.
func (x simStats) ms() *results.Summary {
	return &results.Summary{Count: x.Count, Mean: x.Mean * 1000, Min: x.Min * 1000, P50: x.P50 * 1000,
		P90: x.P90 * 1000, P95: x.P95 * 1000, P99: x.P99 * 1000, Max: x.Max * 1000}
}

// pooledFigures keeps, for a pooling endpoint's run (embeddings,
// rerank), only the figures of a whole answer and its prefill: it
// streams no token, so a client's TTFT, ITL, TPOT or output rate is no
// figure to set beside the server's.
func pooledFigures(res *results.Run) {
	s := res.Server
	if s == nil || !res.Config.Pooled() {
		return
	}
	kept := s.Figures[:0]
	for _, f := range s.Figures {
		if strings.HasPrefix(f.Name, "E2E") || strings.HasPrefix(f.Name, "prefill") || strings.HasPrefix(f.Name, "queue") {
			kept = append(kept, f)
		}
	}
	s.Figures = kept
}
