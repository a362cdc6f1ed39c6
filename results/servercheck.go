package results

import (
	"fmt"
	"math"
	"strings"
)

// The checks in this file set the server's side of a comparison against
// the client's. They live with the data model because both a run (the
// server view read around its window) and a merge of shards (one server
// reading against every shard's totals) make them, and must make the
// same ones.

// SetDelivery sets the figure's delivery, client − server, where the data
// can tell it: always for exact values; for a percentile the server only
// has as a histogram bucket, only where the bucket is narrower than the
// difference (otherwise the client's value may sit anywhere the server's
// could, and a number would be noise dressed as a measurement).
func (f *Figure) SetDelivery() {
	f.Delivery = nil
	if f.Client == nil || f.Server == nil {
		return
	}
	d := *f.Client - *f.Server
	if f.Estimate {
		if f.ServerLow == nil || f.ServerHigh == nil || math.Abs(d) <= *f.ServerHigh-*f.ServerLow {
			return
		}
	}
	f.Delivery = &d
}

// CheckTraffic compares what the server counted in the window with what
// the client did, adding what it finds to s.Traffic: more requests than
// were sent means other traffic is in the server's figures; fewer than
// completed means the server restarted or its counters were reset. For
// voice, the server also saw every call's unmeasured warm-up turn. A
// single shard's client figures are its own part of a load whose every
// request the server saw. counted is false for a server that counts no
// requests; then only the warm-up and shard rules apply.
//
// It reports whether the server's figures cover other requests than the
// client's, or only part of them: then a difference between the two is no
// delivery time (see DropDelivery).
func (s *Server) CheckTraffic(res *Run, serverRequests int64, counted bool) (mixed bool) {
	if sh := res.Shard; sh != nil && sh.Count > 1 && res.MergedShards == 0 {
		s.Traffic = append(s.Traffic, fmt.Sprintf("the server's figures cover all %d shards' requests, the client's this shard's alone: knee merge sets the server against the merged totals", sh.Count))
		return true
	}
	sent, ok := res.Requests.Sent, res.Requests.OK
	if res.Calls != nil && res.Requests.Warmup > 0 {
		sent += res.Requests.Warmup // the calls' warm-up turns
		s.Traffic = append(s.Traffic, "the server's figures include every call's unmeasured warm-up turn; the client's do not")
		mixed = true
	}
	if !counted {
		return mixed
	}
	switch {
	case serverRequests > sent && res.MergedShards > 0:
		// Shards start and warm up on their own: shard 0's window sees the
		// others' warm-up and probe requests, none of them measured.
		s.Traffic = append(s.Traffic, fmt.Sprintf("the server counted %d requests in shard 0's window, the %d shards sent %d measured: the rest are other traffic, such as the other shards' warm-up and probe requests", serverRequests, res.MergedShards, sent))
		mixed = true
	case serverRequests > sent && res.Requests.RampRunning > 0 && serverRequests <= sent+res.Requests.RampRunning+res.Requests.Warmup:
		// The window starts on a loaded server, as in a steady state: the
		// ramp's requests then running end in it.
		s.Traffic = append(s.Traffic, fmt.Sprintf("the server counted %d requests in the window, the client measured %d: the other %d are --ramp-up's requests, %d of them still running as the window opened, which the server counts when they end", serverRequests, sent, serverRequests-sent, res.Requests.RampRunning))
		mixed = true
	case serverRequests > sent && res.Calls == nil && serverRequests <= sent+res.Requests.Warmup:
		// A warm-up request the client gave up on (--request-timeout)
		// ends at the server only when it next writes, in the window.
		s.Traffic = append(s.Traffic, fmt.Sprintf("the server counted %d requests in the window, the client measured %d: the other %d are warm-up requests sent before it, which the server counts when they end (one cut by --request-timeout ends there late)", serverRequests, sent, serverRequests-sent))
		mixed = true
	case serverRequests > sent:
		s.Traffic = append(s.Traffic, fmt.Sprintf("the server counted %d requests in the window, the client sent %d: other traffic is mixed into the server's figures", serverRequests, sent))
		mixed = true
	case serverRequests < ok:
		s.Traffic = append(s.Traffic, fmt.Sprintf("the server counted %d requests in the window, fewer than the %d the client completed: it restarted or its counters were reset, so its figures cover part of the window", serverRequests, ok))
		mixed = true
	}
	return mixed
}

// CheckTokenTraffic is the traffic check for servers that count no
// requests: the generated tokens against the client's.
func (s *Server) CheckTokenTraffic(res *Run) (mixed bool) {
	client := float64(res.Tokens.OutputTotal + res.Requests.PartialTokens)
	if res.Calls != nil {
		client += float64(res.Calls.Started) // one token per warm-up turn
	}
	server := float64(s.OutputTokens)
	switch {
	case server == 0 && client == 0:
	case server > 1.05*client+1:
		s.Traffic = append(s.Traffic, fmt.Sprintf("the server generated %.0f tokens in the window, the client received %.0f: other traffic is mixed into the server's figures", server, client))
		return true
	case server < 0.95*client:
		s.Traffic = append(s.Traffic, fmt.Sprintf("the server counted %.0f generated tokens in the window, fewer than the %.0f the client received: it restarted or its counters were reset", server, client))
		return true
	}
	return false
}

// CheckTTFTGap says when the client's mean TTFT is well above the
// server's (by more than 10 ms and a tenth): more than HTTP to a nearby
// server takes, so the delivery column holds something else too. vLLM's
// TTFT counts from a request's arrival, so its gap is the path; a server
// whose TTFT starts when it schedules a request (llm-d-inference-sim's
// does) leaves its queue out, and only an exported queue time tells the
// two apart. Found against llm-d-inference-sim with four slots at 4
// requests/s: the client's mean 108 ms, the server's 50 ms.
func (s *Server) CheckTTFTGap() {
	var ttft, queue, e2e *Figure
	for i := range s.Figures {
		switch s.Figures[i].Name {
		case "TTFT mean":
			ttft = &s.Figures[i]
		case "queue mean":
			queue = &s.Figures[i]
		case "E2E mean":
			e2e = &s.Figures[i]
		}
	}
	if ttft == nil || ttft.Delivery == nil || ttft.Client == nil {
		return
	}
	gap := *ttft.Delivery
	if gap <= 10 || gap <= 0.1**ttft.Client {
		return
	}
	what := fmt.Sprintf("the client's mean TTFT is %.1f ms above the server's %.1f ms, more than HTTP to a nearby server takes", gap, *ttft.Server)
	if e2e != nil && e2e.Delivery != nil && math.Abs(*e2e.Delivery) < gap/10 {
		// The same requests' ends reach the client as fast as the server
		// counts them: the path is quick, and the server's TTFT starts late.
		s.Traffic = append(s.Traffic, what+fmt.Sprintf(": its mean E2E is within %.1f ms of the client's, so the path is quick and the server's TTFT leaves out time its E2E counts, "+
			"most likely its queue (vLLM's TTFT counts from arrival; llm-d-inference-sim's from scheduling): the TTFT delivery is that, not the path", math.Abs(*e2e.Delivery)))
		return
	}
	if queue != nil && queue.Server != nil && *queue.Server < gap/10 {
		s.Traffic = append(s.Traffic, what+fmt.Sprintf(": its queue averaged %.1f ms, so the gap is the path to it (a proxy, the network, a loaded host)", *queue.Server))
		return
	}
	queued := "it exports no queue time to tell which"
	if queue != nil && queue.Server != nil {
		queued = fmt.Sprintf("its queue averaged %.1f ms", *queue.Server)
	}
	s.Traffic = append(s.Traffic, what+": either the server's TTFT leaves out the time requests wait in its queue "+
		"(vLLM's counts from arrival; llm-d-inference-sim's from scheduling) or the path to it is slow; "+queued+"; the delivery column holds both")
}

// DropDelivery takes the delivery column away from figures that do not
// describe the same requests on both sides.
func (s *Server) DropDelivery() {
	for i := range s.Figures {
		s.Figures[i].Delivery = nil
	}
	s.Traffic = append(s.Traffic, "no delivery column: the server's figures and the client's do not describe the same requests")
}

// AllWarnings are the traffic check's findings, then the others.
func (s *Server) AllWarnings() []string {
	return append(append([]string(nil), s.Traffic...), s.Warnings...)
}

// clientFigure is the client's value of the comparison row name ("TTFT
// p50", "E2E mean", "output tok/s") in r; ok is false for a row with no
// client counterpart (the server's queue time, llama.cpp's prefill).
func clientFigure(r *Run, name string) (v *float64, ok bool) {
	if name == "output tok/s" {
		x := r.Throughput.OutputTokensPerS
		return &x, true
	}
	metric, stat, found := strings.Cut(name, " ")
	if !found {
		return nil, false
	}
	var sum *Summary
	switch metric {
	case "TTFT":
		sum = &r.Stats.TTFT
	case "ITL":
		sum = &r.Stats.ITL
	case "TPOT":
		sum = &r.Stats.TPOT
	case "E2E":
		sum = &r.Stats.E2E
	default:
		return nil, false
	}
	if sum.Count == 0 {
		return nil, true
	}
	var x float64
	switch stat {
	case "mean":
		x = sum.Mean
	case "p50":
		x = sum.P50
	case "p90":
		x = sum.P90
	case "p95":
		x = sum.P95
	case "p99":
		x = sum.P99
	default:
		return nil, false
	}
	return &x, true
}
