package cmd

import (
	"math"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestStreamIntervalPredictedAsLive: a model that sends its tokens eight
// at a time (stream_interval: 8) is measured live and predicted alike:
// the same TTFT, and an ITL that is a group's gap (about eight steps),
// not a step's, while TPOT stays a token's; the client sees the packed
// chunks.
func TestStreamIntervalPredictedAsLive(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		t.Setenv("KNEE_RUN_NONCE", "5ea11")
		dir := t.TempDir()
		url, models := simOfModels(t, dir, "si", "models:\n  - name: si\n    preset: h100-80gb/llama-3.1-8b\n    stream_interval: 8\n")
		flags := []string{"--rates", "4", "--step-duration", "20s", "--input-tokens", "500", "--max-tokens", "64"}
		live, pred := liveAndPredicted(t, url, dir, flags, []string{"--model", "si"}, []string{"--sim-models", models})
		groupedAlike(t, live.Levels[0].Run, pred.Levels[0].Run, "a group of 8")
	})
}

// groupedAlike checks a level of tokens sent in groups of about eight,
// live and predicted: the same TTFT, ITL and TPOT (within 1 ms and 5%),
// an ITL of a group's gap (6–10 TPOTs) while TPOT stays a token's, and
// chunks of several tokens seen by the client. what names the group.
func groupedAlike(t *testing.T, l, p *results.Run, what string) {
	t.Helper()
	for _, m := range []struct {
		name       string
		live, pred float64
	}{{"TTFT p50", l.Stats.TTFT.P50, p.Stats.TTFT.P50}, {"ITL p50", l.Stats.ITL.P50, p.Stats.ITL.P50},
		{"TPOT p50", l.Stats.TPOT.P50, p.Stats.TPOT.P50}} {
		if math.Abs(m.live-m.pred) > 1+0.05*m.pred {
			t.Errorf("%s live %.2f ms, predicted %.2f ms", m.name, m.live, m.pred)
		}
	}
	if r := l.Stats.ITL.P50 / l.Stats.TPOT.P50; r < 6 || r > 10 {
		t.Errorf("ITL p50 %.2f ms is %.1f TPOTs (%.2f ms): want about %s", l.Stats.ITL.P50, r, l.Stats.TPOT.P50, what)
	}
	if l.Tokens.MultiTokenChunks == 0 {
		t.Error("the client saw no chunk of several tokens")
	}
}
