package cmd

import (
	"math"
	"os"
	"path/filepath"
	"testing"
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
	models := filepath.Join(dir, "pd.yml")
	yml := "models:\n  - name: pd\n    preset: h100-80gb/llama-3.1-8b\n" +
		"    disaggregated: {prefill_replicas: 2, decode_replicas: 1, kv_link_gbps: 25}\n"
	if err := os.WriteFile(models, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startSim(t, models, "")
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
