package serverview

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/kneebench/knee/results"
)

// FuzzServerMetrics: whatever two /metrics pages a server sends, the view
// reads them without a panic (Prometheus's own parser once dereferenced
// nil on a TYPE line before a bare "{}"), and every figure it keeps is
// finite: a NaN never reaches a file.
func FuzzServerMetrics(f *testing.F) {
	before, err := os.ReadFile("testdata/vllm_before.txt")
	if err != nil {
		f.Fatal(err)
	}
	after, err := os.ReadFile("testdata/vllm_after.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add("vllm", string(before), string(after))
	f.Add("vllm", "# TYPE A000000000000000000 gAuge\n{}", "{}")
	f.Add("sglang", "sglang:num_requests_total 5\n", "sglang:num_requests_total 2\n")
	f.Add("llamacpp", "llamacpp:prompt_tokens_total NaN\n", "llamacpp:prompt_tokens_total +Inf\n")
	f.Fuzz(func(t *testing.T, kind, a, b string) {
		if promNames[kind] == nil {
			kind = "vllm"
		}
		sa, errA := parseExposition([]byte(a))
		sb, errB := parseExposition([]byte(b))
		if errA != nil || errB != nil {
			return
		}
		v := &View{kind: kind, before: sa, after: sb}
		res := &results.Run{WindowSeconds: 10}
		res.Stats.TTFT = results.Summary{Count: 10, Mean: 50, P50: 50, P99: 90}
		v.fillProm(res)
		// encoding/json refuses NaN and infinities.
		if _, err := json.Marshal(res.Server); err != nil {
			t.Fatalf("the server view does not write: %v", err)
		}
	})
}
