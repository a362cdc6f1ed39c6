package predict

import (
	"math"
	"strings"
	"testing"

	"github.com/kneebench/knee/simulator/sched"
)

// TestReplicaLimit holds what a tally of steps says limits a replica.
func TestReplicaLimit(t *testing.T) {
	decode := sched.Step{Duration: 0.01, Compute: 0.002, Memory: 0.01, DecodeTokens: 32}
	prefill := sched.Step{Duration: 0.08, Compute: 0.08, Memory: 0.01, PrefillTokens: 2048, DecodeTokens: 32}
	queued := func(st sched.Step, why string) sched.Step { st.Waiting, st.StopReason = 3, why; return st }
	for _, tc := range []struct {
		name    string
		steps   []sched.Step
		n       []int
		metric  string
		pct     float64
		want    string
		share   float64
		explain string
	}{
		{"decode time is bandwidth's", []sched.Step{decode, prefill}, []int{100, 1}, "e2e", 95, LimitBandwidth, 1.0 / 1.08, "memory bandwidth"},
		{"a first token waits on prefill steps", []sched.Step{decode, prefill}, []int{100, 1}, "ttft", 95, LimitCompute, 1, "steps carrying a prefill chunk"},
		{"stalls past the tail", []sched.Step{decode, prefill}, []int{90, 10}, "itl", 95, LimitStalls, 0.1, "past the p95's tail"},
		{"stalls near the tail", []sched.Step{decode, prefill}, []int{191, 9}, "itl", 95, LimitStalls, 0.045, "more load puts the stalls in it"},
		{"stalls far from the tail", []sched.Step{decode, prefill}, []int{99, 1}, "itl", 95, LimitBandwidth, 0.99 / 1.07, "memory bandwidth"},
		{"a full KV cache", []sched.Step{queued(decode, sched.StopKVFull), queued(decode, sched.StopPreempted), queued(decode, sched.StopBatchFull)}, []int{5, 2, 3}, "ttft", 95, LimitKV, 0.7, "KV cache full"},
		{"full batch slots", []sched.Step{queued(decode, sched.StopBatchFull), queued(decode, sched.StopKVFull)}, []int{8, 2}, "ttft", 95, LimitSlots, 0.8, "max_num_seqs"},
		{"all-reduces", []sched.Step{{Duration: 0.02, Compute: 0.005, Memory: 0.005, Comm: 0.02, DecodeTokens: 8}}, []int{10}, "e2e", 95, LimitComm, 1, "all-reduce"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tally StepTally
			for i, st := range tc.steps {
				for range tc.n[i] {
					tally.add(&st)
				}
			}
			name, share, detail := tally.Limit(tc.metric, tc.pct)
			if name != tc.want || math.Abs(share-tc.share) > 1e-9 || !strings.Contains(detail, tc.explain) {
				t.Errorf("%s %.4f (%s), want %s %.4f saying %q", name, share, detail, tc.want, tc.share, tc.explain)
			}
		})
	}
	if name, _, _ := (&StepTally{}).Limit("ttft", 95); name != "" {
		t.Errorf("no steps: %q, want none", name)
	}
}
