package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestPlanWeighsDisaggregatedSplits: --disaggregated lists xPyD splits in
// the plan's JSON beside the aggregated replicas, each with what binds it
// and its phases at the target, and the answer line says which kind
// wins; flags that cannot be planned are refused before any prediction.
func TestPlanWeighsDisaggregatedSplits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := execute(t, "plan", "--rate", "20", "--input-tokens", "4000", "--max-tokens", "200", "--gpus", "h100-80gbx1",
		"--slo", "ttft_p95:2000", "--disaggregated", "--window", "1m", "--routing", "round-robin", "--seeds", "1", "--out-dir", dir, "--label", "pd")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	p := &results.Plan{}
	if err := readJSON(filepath.Join(dir, "pd.json"), p); err != nil {
		t.Fatal(err)
	}
	splits, aggregated := 0, 0
	for _, r := range p.Rows {
		switch {
		case r.PrefillReplicas > 0 && r.Meets:
			splits++
			if r.DecodeReplicas < 1 || r.Replicas != r.PrefillReplicas+r.DecodeReplicas || r.KVLinkGbps != 400 || r.Limit == "" ||
				r.AtTarget == nil || r.AtTarget.Phases == nil || r.Headroom < 20 || r.PerReplica != 0 {
				t.Errorf("split row %+v", r)
			}
		case r.Meets:
			aggregated++
		}
	}
	if !p.Disaggregated || splits == 0 || aggregated == 0 {
		t.Fatalf("disaggregated %v, %d splits and %d aggregated rows meet\n%s", p.Disaggregated, splits, aggregated, out)
	}
	if !strings.Contains(out, "P") || !(strings.Contains(out, "aggregated replicas win") || strings.Contains(out, "disaggregated")) {
		t.Errorf("the answer does not weigh the kinds:\n%s", out)
	}
	for _, bad := range [][]string{
		{"plan", "--rate", "5", "--disaggregated", "--kv-link-gbps", "0"},
		{"plan", "--rate", "5", "--disaggregated", "--kv-link-gbps", "NaN"},
		{"plan", "--rate", "5", "--kv-link-gbps", "100"},
		{"plan", "--find-max-rate", "--gpus", "h100-80gbx2", "--disaggregated"},
	} {
		if code, _, _ := execute(t, bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, ExitUsage)
		}
	}
}
