package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// A disaggregated model's /metrics carries its pools' series in vLLM's
// names with a role label, in place of the model's own (no series of
// the same name without a role), and each pool's page has them without:
// the exposition parses, one family a name.
func TestPoolsOnMetrics(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		ts := startSim(t, `models:
  - name: pd
    preset: h100-80gb/llama-3.1-8b
    disaggregated: {prefill_replicas: 1, decode_replicas: 1, kv_link_gbps: 100}
  - name: instant
    engine: instant
    context_length: 4096
`, "", "")
		if code, b := post(t, ts.URL+"/v1/chat/completions", `{"model":"pd","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`); code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		_, body := get(t, ts.URL+"/metrics")
		parser := expfmt.NewTextParser(pmodel.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("/metrics does not parse: %v", err)
		}
		roles := map[string]bool{}
		for _, m := range fams["vllm:num_requests_running"].GetMetric() {
			role, name := "", ""
			for _, l := range m.Label {
				switch l.GetName() {
				case "role":
					role = l.GetValue()
				case "model_name":
					name = l.GetValue()
				}
			}
			if name == "pd" {
				roles[role] = true
			}
		}
		if !roles["prefill"] || !roles["decode"] || roles[""] {
			t.Errorf("pd's running gauges by role: %v, want prefill and decode and no role-less one", roles)
		}
		if fams["vllm:nixl_xfer_time_seconds"] == nil || fams["vllm:cache_config_info"] == nil {
			t.Error("the decode pool's transfers or the model's cache config are missing from /metrics")
		}
		for _, role := range []string{"prefill", "decode"} {
			code, page := get(t, ts.URL+"/metrics/"+role)
			if code != 200 || !strings.Contains(string(page), `vllm:request_queue_time_seconds_count{engine="0",model_name="pd"} 1`) {
				t.Errorf("/metrics/%s: %d\n%.300s", role, code, page)
			}
		}
	})
}
