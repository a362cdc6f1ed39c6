package cmd

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestDisaggPredictAgreesWithLive serves a model disaggregated (2P1D,
// a 25 Gb/s KV link) on knee sim and sweeps it live, then predicts the
// same sweep on the same seed: the core is one, so TTFT and TPOT agree
// within 5% at p50 and p95, and both carry the time to first token by
// phase, the server's account and the prediction's.
func TestDisaggPredictAgreesWithLive(t *testing.T) {
	inBubble(t, testDisaggPredictAgreesWithLive)
}

func testDisaggPredictAgreesWithLive(t *testing.T) {
	t.Setenv("KNEE_RUN_NONCE", "d15a66")
	dir := t.TempDir()
	url, models := simOfModels(t, dir, "pd", "models:\n  - name: pd\n    preset: h100-80gb/llama-3.1-8b\n"+
		"    disaggregated: {prefill_replicas: 2, decode_replicas: 1, kv_link_gbps: 25}\n")
	flags := []string{"--rates", "2,8", "--step-duration", "30s", "--input-tokens", "3000", "--max-tokens", "64"}
	live, pred := liveAndPredicted(t, url, dir, flags, []string{"--model", "pd"}, []string{"--sim-models", models})
	if len(live.Levels) != 2 || len(pred.Levels) != 2 {
		t.Fatalf("%d live and %d predicted levels, want 2", len(live.Levels), len(pred.Levels))
	}
	for i := range live.Levels {
		l, p := live.Levels[i].Run, pred.Levels[i].Run
		if l.Phases == nil || p.Phases == nil || l.Phases.Source != "knee-sim" || p.Phases.Source != "simulated" {
			t.Fatalf("level %g: phases live %+v, predicted %+v", live.Levels[i].Load, l.Phases, p.Phases)
		}
		for _, m := range []struct {
			name       string
			live, pred float64
		}{{"TTFT p50", l.Stats.TTFT.P50, p.Stats.TTFT.P50}, {"TTFT p95", l.Stats.TTFT.P95, p.Stats.TTFT.P95},
			{"TPOT p50", l.Stats.TPOT.P50, p.Stats.TPOT.P50}, {"TPOT p95", l.Stats.TPOT.P95, p.Stats.TPOT.P95},
			{"KV transfer p50", l.Phases.Transfer.P50, p.Phases.Transfer.P50}} {
			t.Logf("level %g: %s live %.2f ms, predicted %.2f ms", live.Levels[i].Load, m.name, m.live, m.pred)
			if math.Abs(m.live-m.pred) > 2+0.05*m.pred {
				t.Errorf("level %g: %s live %.2f ms, predicted %.2f ms: more than 5%% apart", live.Levels[i].Load, m.name, m.live, m.pred)
			}
		}
	}
}

// TestPlannedSplitHoldsLive: the split a plan chooses, served by knee sim
// and measured live on the plan's workload and seed, meets the SLO; the
// next-smaller splits (one prefill or one decode replica fewer) do not.
func TestPlannedSplitHoldsLive(t *testing.T) {
	inBubble(t, testPlannedSplitHoldsLive)
}

func testPlannedSplitHoldsLive(t *testing.T) {
	t.Setenv("KNEE_RUN_NONCE", "5p117")
	dir := t.TempDir()
	work := []string{"--input-tokens", "4000", "--max-tokens", "64", "--seed", "3"}
	slo := "ttft_p95:1500,tpot_p50:12"
	args := append([]string{"plan", "--rate", "14", "--gpus", "h100-80gbx1", "--slo", slo, "--disaggregated", "--window", "1m",
		"--seeds", "1", "--routing", "round-robin", "--kv-link-gbps", "100", "--out-dir", dir, "--label", "p"}, work...)
	if code, out, errOut := execute(t, args...); code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	p := &results.Plan{}
	if err := readJSON(filepath.Join(dir, "p.json"), p); err != nil {
		t.Fatal(err)
	}
	var chosen *results.PlanRow
	for i := range p.Rows {
		if r := &p.Rows[i]; r.Meets && r.PrefillReplicas > 0 && (chosen == nil || r.Replicas < chosen.Replicas) {
			chosen = r
		}
	}
	if chosen == nil {
		t.Fatalf("no split meets the SLO: %+v", p.Rows)
	}
	meets := func(pf, d int) bool {
		url, _ := simOfModels(t, dir, fmt.Sprintf("s%d%d", pf, d), fmt.Sprintf("models:\n  - name: pd\n    preset: h100-80gb/llama-3.1-8b\n"+
			"    disaggregated: {prefill_replicas: %d, decode_replicas: %d, kv_link_gbps: 100}\n", pf, d))
		label := fmt.Sprintf("live%d%d", pf, d)
		a := append([]string{"sweep", "--base-url", url, "--model", "pd", "--rates", "14", "--step-duration", "1m", "--slo", slo,
			"--out-dir", dir, "--label", label}, work...)
		if code, out, errOut := execute(t, a...); code != 0 && code != 1 {
			t.Fatalf("sweep %dP%dD: exit %d\n%s\n%s", pf, d, code, out, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		v := sw.Levels[0].Verdict
		t.Logf("%dP%dD live: %+v", pf, d, v)
		return v != nil && v.Judged && v.Meets
	}
	pf, d := chosen.PrefillReplicas, chosen.DecodeReplicas
	if !meets(pf, d) {
		t.Errorf("the planned %dP%dD misses the SLO live", pf, d)
	}
	if pf > 1 && meets(pf-1, d) {
		t.Errorf("%dP%dD, smaller than the planned %dP%dD, meets the SLO live: the plan was not the cheapest", pf-1, d, pf, d)
	}
	if d > 1 && meets(pf, d-1) {
		t.Errorf("%dP%dD, smaller than the planned %dP%dD, meets the SLO live: the plan was not the cheapest", pf, d-1, pf, d)
	}
}
