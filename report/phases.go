package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kneebench/knee/results"
)

// phaseWords name the phases of a disaggregated model's time to first
// token, in results.PhaseNames' order.
var phaseWords = []string{"prefill queue", "prefill", "KV transfer", "decode queue", "first decode step"}

// runPhases is a disaggregated model's time to first token by phase,
// whose it is, and each pool's own account where read.
func runPhases(w io.Writer, r *results.Run) error {
	if ph := r.Phases; ph != nil {
		fmt.Fprintln(w, PhasesLine(ph))
	}
	for _, role := range []string{"prefill", "decode"} {
		if s := r.Pools[role]; s != nil {
			fmt.Fprintln(w, poolLine(role, s))
		}
	}
	return nil
}

// poolLine is one pool's account of the window: what it served and its
// gauges.
func poolLine(role string, s *results.Server) string {
	return fmt.Sprintf("pool     %s: %s", role, poolBody(s))
}

// poolBody is a pool's account, as its engine's metrics give it.
func poolBody(s *results.Server) string {
	out := fmt.Sprintf("%s requests, %s prompt and %s output tokens", num(float64(s.Requests), 0),
		num(float64(s.PromptTokens), 0), num(float64(s.OutputTokens), 0))
	for _, g := range []struct{ key, name string }{{"running", "running"}, {"waiting", "waiting"}} {
		if v, ok := s.Gauges[g.key]; ok {
			out += fmt.Sprintf(" · %s mean %.2f max %.0f", g.name, v.Mean, v.Max)
		}
	}
	if v, ok := s.Gauges["kv_cache_usage"]; ok {
		out += fmt.Sprintf(" · KV cache mean %s max %s", pct(v.Mean), pct(v.Max))
	}
	return out + fmt.Sprintf(" (its %s metrics)", s.Source)
}

// PhasesLine says a disaggregated model's time to first token by phase,
// p50/p95 in milliseconds, or the means where the engines' histograms
// are all there is.
func PhasesLine(ph *results.Phases) string {
	var parts []string
	for i, s := range ph.All() {
		if ph.Estimate {
			v := "-" // a phase the engine does not time
			if s.Count > 0 {
				v = ms(s.Mean)
			}
			parts = append(parts, fmt.Sprintf("%s %s", phaseWords[i], v))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s", phaseWords[i], ms(s.P50), ms(s.P95)))
	}
	if ph.Estimate {
		line := fmt.Sprintf("phases   TTFT by phase, mean ms (%s pools' histograms): %s", ph.Source, strings.Join(parts, " · "))
		if len(ph.Unpublished) > 0 {
			line += fmt.Sprintf(" (- not timed by the pools' metrics: %s)", strings.ReplaceAll(strings.Join(ph.Unpublished, ", "), "_", " "))
		}
		return line
	}
	who := ph.Source
	if ph.PrefillReplicas > 0 {
		who = fmt.Sprintf("%s, %dP%dD, KV link %s Gb/s", who, ph.PrefillReplicas, ph.DecodeReplicas, num(ph.LinkGbps, 0))
	}
	return fmt.Sprintf("phases   TTFT by phase, p50/p95 ms (%s): %s", who, strings.Join(parts, " · "))
}
