package serverview

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/results"
)

// llmdPage is a pool's page as llm-d-inference-sim writes it: vLLM's
// names, a request counter and the prefill-time histogram, but no queue
// time and no KV-transfer histogram.
func llmdPage(requests int, prefillSum float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 0\n")
	fmt.Fprintf(&b, "# TYPE vllm:request_success_total counter\nvllm:request_success_total{finished_reason=\"length\",model_name=\"m\"} %d\n", requests)
	fmt.Fprintf(&b, "# TYPE vllm:request_prefill_time_seconds histogram\n")
	for _, le := range []string{"0.01", "0.05", "+Inf"} {
		n := requests
		if le == "0.01" {
			n = 0
		}
		fmt.Fprintf(&b, "vllm:request_prefill_time_seconds_bucket{model_name=\"m\",le=\"%s\"} %d\n", le, n)
	}
	fmt.Fprintf(&b, "vllm:request_prefill_time_seconds_sum{model_name=\"m\"} %g\nvllm:request_prefill_time_seconds_count{model_name=\"m\"} %d\n", prefillSum, requests)
	return b.String()
}

// TestPoolsOfAnEngineTimingSomePhases: pools whose pages time only the
// prefill (llm-d-inference-sim's) give the phases they time and name the
// others as untimed, rather than no breakdown at all; without the
// transfer's histogram the decode side's prefill time, which holds it, is
// no first decode step. Each pool's count is checked against the
// client's requests: the same 10, so no other traffic is claimed.
func TestPoolsOfAnEngineTimingSomePhases(t *testing.T) {
	quiet.Wire(t, func() {
		pre := serveTexts(t, 200, llmdPage(0, 0), llmdPage(0, 0), llmdPage(10, 0.2))
		dec := serveTexts(t, 200, llmdPage(0, 0), llmdPage(0, 0), llmdPage(10, 0.4))
		p, err := NewPools(transport.Target{Model: "m"}, map[string]string{"prefill": pre[:len(pre)-3] + "/metrics",
			"decode": dec[:len(dec)-3] + "/metrics"})
		if err != nil {
			t.Fatal(err)
		}
		p.Start(t.Context())
		p.End(t.Context())
		res := &results.Run{WindowSeconds: 10}
		res.Requests.Sent, res.Requests.OK = 10, 10
		p.Fill(res)
		ph := res.Phases
		if ph == nil || ph.Prefill.Count != 10 || ph.Prefill.Mean != 20 {
			t.Fatalf("phases %+v, want the prefill pool's 10 prefills of 20 ms mean", ph)
		}
		want := []string{"prefill_queue", "kv_transfer", "decode_queue", "first_decode_step"}
		if !slices.Equal(ph.Unpublished, want) || ph.FirstStep.Count != 0 {
			t.Errorf("untimed %v, first step %+v; want %v and none", ph.Unpublished, ph.FirstStep, want)
		}
		for role, s := range res.Pools {
			if w := strings.Join(s.AllWarnings(), "; "); strings.Contains(w, "other traffic") {
				t.Errorf("%s pool: %s", role, w)
			}
		}
	})
}
