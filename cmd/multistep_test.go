package cmd

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestMultiStepPredictedAsLive: a model scheduled as vLLM V0 with
// windows of eight steps, sending a window's tokens at its end
// (num_scheduler_steps: 8, multi_step_stream_outputs: false), is measured
// live and predicted alike; its ITL is a window's gap while TPOT stays a
// token's, and the client sees packed chunks.
func TestMultiStepPredictedAsLive(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		t.Setenv("KNEE_RUN_NONCE", "5ea12")
		dir := t.TempDir()
		url, models := simOfModels(t, dir, "ms", "models:\n  - name: ms\n    preset: h100-80gb/llama-3.1-8b\n"+
			"    schedules_as: vllm-v0\n    max_model_len: 8192\n    num_scheduler_steps: 8\n    multi_step_stream_outputs: false\n")
		flags := []string{"--rates", "4", "--step-duration", "20s", "--input-tokens", "500", "--max-tokens", "64"}
		live, pred := liveAndPredicted(t, url, dir, flags, []string{"--model", "ms"}, []string{"--sim-models", models})
		groupedAlike(t, live.Levels[0].Run, pred.Levels[0].Run, "a window of 8")
	})
}

// TestMultiStepDelaysAdmission: predicted, windows of eight steps make
// an arrival wait for the window under way, so TTFT p50 grows by
// steps' worth against windows of one; TPOT barely moves.
func TestMultiStepDelaysAdmission(t *testing.T) {
	dir := t.TempDir()
	p50 := map[int]results.Run{}
	for _, steps := range []int{1, 8} {
		models := filepath.Join(dir, "m.yml")
		yml := "models:\n  - name: ms\n    preset: h100-80gb/llama-3.1-8b\n    schedules_as: vllm-v0\n" +
			"    max_model_len: 8192\n    num_scheduler_steps: " + strconv.Itoa(steps) + "\n"
		if err := os.WriteFile(models, []byte(yml), 0o644); err != nil {
			t.Fatal(err)
		}
		label := "steps" + strconv.Itoa(steps)
		code, out, errOut := execute(t, "predict", "--sim-models", models, "--rates", "4", "--step-duration", "60s",
			"--input-tokens", "500", "--max-tokens", "64", "--out-dir", dir, "--label", label)
		if code != 0 {
			t.Fatalf("predict: exit %d\n%s\n%s", code, out, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		p50[steps] = *sw.Levels[0].Run
	}
	one, eight := p50[1].Stats, p50[8].Stats
	if one.TTFT.P50+2*one.TPOT.P50 > eight.TTFT.P50 {
		t.Errorf("TTFT p50 %.2f ms with windows of 8, %.2f with every step scheduled: want at least two steps (%.2f ms) more",
			eight.TTFT.P50, one.TTFT.P50, 2*one.TPOT.P50)
	}
	if math.Abs(eight.TPOT.P50-one.TPOT.P50) > 0.1*one.TPOT.P50 {
		t.Errorf("TPOT p50 %.2f ms with windows of 8, %.2f without", eight.TPOT.P50, one.TPOT.P50)
	}
}
