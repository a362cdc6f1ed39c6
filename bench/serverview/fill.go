package serverview

import (
	"fmt"
	"math"

	"github.com/kneebench/knee/results"
)

func ptr(v float64) *float64 { return &v }

// figure builds a comparison row from exact values; delivery is client −
// server.
func figure(name string, client, server, simulated *float64) results.Figure {
	f := results.Figure{Name: name, Client: client, Server: server, Simulated: simulated}
	if client != nil && server != nil {
		f.Delivery = ptr(*client - *server)
	}
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
	if client != nil {
		if d := *client - *f.Server; math.Abs(d) > *f.ServerHigh-*f.ServerLow {
			f.Delivery = ptr(d)
		}
	}
	return f
}

// Fill adds the server's account to a run's result.
func (v *View) Fill(res *results.Run) {
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

// trafficWarnings compares what the server counted in the window with what
// the client did: more requests than were sent means other traffic is in
// the server's figures; fewer than completed means the server restarted or
// its counters were reset. For voice, the server also saw every call's
// unmeasured warm-up turn.
//
// It reports whether the server's figures cover other requests than the
// client's, or only part of them: then a difference between the two is no
// delivery time, and noDelivery takes that column away.
func trafficWarnings(s *results.Server, res *results.Run, serverRequests int64, counted bool) (mixed bool) {
	sent, ok := res.Requests.Sent, res.Requests.OK
	if res.Calls != nil && res.Requests.Warmup > 0 {
		sent += res.Requests.Warmup // the calls' warm-up turns
		s.Warnings = append(s.Warnings, "the server's figures include every call's unmeasured warm-up turn; the client's do not")
		mixed = true
	}
	if !counted {
		return mixed
	}
	switch {
	case serverRequests > sent:
		s.Warnings = append(s.Warnings, fmt.Sprintf("the server counted %d requests in the window, the client sent %d: other traffic is mixed into the server's figures", serverRequests, sent))
		mixed = true
	case serverRequests < ok:
		s.Warnings = append(s.Warnings, fmt.Sprintf("the server counted %d requests in the window, fewer than the %d the client completed: it restarted or its counters were reset, so its figures cover part of the window", serverRequests, ok))
		mixed = true
	}
	return mixed
}

// noDelivery takes the delivery column away from figures that do not
// describe the same requests on both sides.
func noDelivery(s *results.Server) {
	for i := range s.Figures {
		s.Figures[i].Delivery = nil
	}
	s.Warnings = append(s.Warnings, "no delivery column: the server's figures and the client's do not describe the same requests")
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
	s.Lag = &results.Summary{Count: m.Lag.Count, Mean: m.Lag.Mean * 1000, Min: m.Lag.Min * 1000, P50: m.Lag.P50 * 1000,
		P90: m.Lag.P90 * 1000, P95: m.Lag.P95 * 1000, P99: m.Lag.P99 * 1000, Max: m.Lag.Max * 1000}
	if sc := m.Scheduler; sc != nil {
		s.Preemptions = sc.Preemptions
		if sc.PrefixQueries > 0 {
			s.PrefixHitRate = ptr(sc.PrefixHitRate)
		}
	}
	if trafficWarnings(s, res, v.simReqs, true) {
		noDelivery(s)
	}
	res.Server = s
}
