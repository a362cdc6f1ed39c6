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
// whose it is, and its pools where known.
func runPhases(w io.Writer, r *results.Run) error {
	if ph := r.Phases; ph != nil {
		fmt.Fprintln(w, PhasesLine(ph))
	}
	return nil
}

// PhasesLine says a disaggregated model's time to first token by phase,
// p50/p95 in milliseconds.
func PhasesLine(ph *results.Phases) string {
	var parts []string
	for i, s := range ph.All() {
		parts = append(parts, fmt.Sprintf("%s %s/%s", phaseWords[i], ms(s.P50), ms(s.P95)))
	}
	who := ph.Source
	if ph.PrefillReplicas > 0 {
		who = fmt.Sprintf("%s, %dP%dD, KV link %s Gb/s", who, ph.PrefillReplicas, ph.DecodeReplicas, num(ph.LinkGbps, 0))
	}
	return fmt.Sprintf("phases   TTFT by phase, p50/p95 ms (%s): %s", who, strings.Join(parts, " · "))
}
