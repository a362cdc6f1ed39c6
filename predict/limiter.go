package predict

import (
	"fmt"
	"strings"

	"github.com/kneebench/knee/simulator/sched"
)

// What limits a replica at its capacity.
const (
	LimitCompute   = "compute"
	LimitBandwidth = "memory bandwidth"
	LimitComm      = "all-reduce"
	LimitKV        = "KV capacity"
	LimitSlots     = "batch slots"
	LimitStalls    = "prefill stalls"
)

// StepTally sums a level's scheduler steps by what bounded them: each
// step's time under the roofline term that set it (compute, memory
// bandwidth or the all-reduces), and, for steps that left requests
// waiting, why admission stopped.
type StepTally struct {
	Time, Compute, Memory, Comm float64
	// Prefill is the same split of the steps that carried a prefill chunk:
	// what a first token waits on.
	Prefill struct{ Time, Compute, Memory, Comm float64 }
	// Queued is the time of steps that left requests waiting, and Stopped
	// that time by the admission's stop reason (sched.StopKVFull, …).
	Queued  float64
	Stopped map[string]float64
	// Decoded counts the tokens decoded, Stalled those decoded in a step
	// that also carried a prefill chunk: each such token's gap is the
	// chunk's time too.
	Decoded, Stalled int
}

// add counts a step.
func (t *StepTally) add(st *sched.Step) {
	d := st.Duration
	t.Time += d
	t.Decoded += st.DecodeTokens
	term := &t.Memory
	switch {
	case st.Comm >= st.Compute && st.Comm >= st.Memory:
		term = &t.Comm
	case st.Compute >= st.Memory:
		term = &t.Compute
	}
	*term += d
	if st.PrefillTokens > 0 {
		t.Stalled += st.DecodeTokens
		p := &t.Prefill
		p.Time += d
		switch term {
		case &t.Comm:
			p.Comm += d
		case &t.Compute:
			p.Compute += d
		default:
			p.Memory += d
		}
	}
	if st.Waiting > 0 {
		if t.Stopped == nil {
			t.Stopped = map[string]float64{}
		}
		t.Queued += d
		t.Stopped[st.StopReason] += d
	}
}

// Limit says what limits the replica, the share that shows it, and how.
// binding is the SLO bound nearest its limit there (its metric and
// percentile). A bound on the gaps between tokens (itl, tpot) whose
// percentile falls among gaps that waited on a prefill chunk is limited
// by those stalls (at a replica's capacity the stalled share sits just
// under the percentile's tail: within a fifth of it counts); else a KV cache or batch that stopped admission in
// most of the time requests waited; else the roofline term that set most
// of the step time ("" when no step ran).
func (t *StepTally) Limit(metric string, percentile float64) (string, float64, string) {
	if t.Time <= 0 {
		return "", 0, ""
	}
	if (metric == "itl" || metric == "tpot") && t.Decoded > 0 {
		share, tail := float64(t.Stalled)/float64(t.Decoded), 1-percentile/100
		switch {
		case share >= tail:
			return LimitStalls, share, fmt.Sprintf("%.1f%% of decoded tokens waited on a step carrying a prefill chunk, past the p%g's tail of %.0f%%: the p%g gap is such a step, and it lengthens with the load (smaller prefill chunks, or disaggregated prefill, move it)",
				100*share, percentile, 100*tail, percentile)
		case share >= modeEdgeShare*tail:
			return LimitStalls, share, fmt.Sprintf("%.1f%% of decoded tokens waited on a step carrying a prefill chunk, where the p%g's tail is %.0f%%: more load puts the stalls in it (smaller prefill chunks, or disaggregated prefill, move it)",
				100*share, percentile, 100*tail)
		}
	}
	if t.Queued > 0.05*t.Time {
		kv := t.Stopped[sched.StopKVFull] + t.Stopped[sched.StopPreempted]
		if kv > 0.5*t.Queued {
			return LimitKV, kv / t.Queued, fmt.Sprintf("the KV cache full in %.0f%% of the time requests waited", 100*kv/t.Queued)
		}
		if b := t.Stopped[sched.StopBatchFull]; b > 0.5*t.Queued {
			return LimitSlots, b / t.Queued, fmt.Sprintf("max_num_seqs full in %.0f%% of the time requests waited", 100*b/t.Queued)
		}
	}
	total, compute, memory, comm, what := t.Time, t.Compute, t.Memory, t.Comm, "step time"
	if strings.HasPrefix(metric, "ttf") && t.Prefill.Time > 0 {
		// A first token waits on the steps carrying its prompt.
		p := t.Prefill
		total, compute, memory, comm, what = p.Time, p.Compute, p.Memory, p.Comm, "the time of steps carrying a prefill chunk"
	}
	name, part := LimitCompute, compute
	if memory > part {
		name, part = LimitBandwidth, memory
	}
	if comm > part {
		name, part = LimitComm, comm
	}
	return name, part / total, fmt.Sprintf("%.0f%% of %s bound by %s (compute %.0f%%, memory bandwidth %.0f%%, all-reduce %.0f%%)",
		100*part/total, what, name, 100*compute/total, 100*memory/total, 100*comm/total)
}
