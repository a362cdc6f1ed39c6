package cmd

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestStepTimeCVBreaksLockStep: five closed-loop streams of identical
// long requests collide once and then, with exact step times, keep
// colliding the same way: a handful of distinct TTFTs over 120 requests.
// step_time_cv beside a preset in the models file reaches the predictor
// and spreads them, the same again for the same seed.
func TestStepTimeCVBreaksLockStep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	distinct := func(name, cv string) map[int64]bool {
		t.Helper()
		models := filepath.Join(dir, name+".yml")
		body := "models:\n  - name: llama-3.1-8b\n    preset: h100-80gb/llama-3.1-8b\n    step_time_cv: " + cv + "\n"
		if err := os.WriteFile(models, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		records := filepath.Join(dir, name+".jsonl")
		if code, out, errOut := execute(t, "predict", "--sim-models", models, "--model", "llama-3.1-8b", "--concurrency", "5",
			"--input-tokens", "5000", "--max-tokens", "500", "--requests", "120", "--records", records,
			"--out-dir", dir, "--label", name); code != 0 {
			t.Fatalf("predict: exit %d\n%s\n%s", code, out, errOut)
		}
		f, err := os.Open(records)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		seen := map[int64]bool{}
		for sc := bufio.NewScanner(f); sc.Scan(); {
			var r struct {
				TTFT   int64 `json:"ttft_ns"`
				Warmup bool  `json:"warmup"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if !r.Warmup {
				seen[r.TTFT] = true
			}
		}
		return seen
	}
	exact, jittered, again := distinct("exact", "0"), distinct("jittered", "0.05"), distinct("again", "0.05")
	t.Logf("distinct TTFTs of 120: %d with exact step times, %d with a CV of 0.05", len(exact), len(jittered))
	if len(exact) > 30 || len(jittered) < 100 || !maps.Equal(jittered, again) {
		t.Errorf("distinct TTFTs %d exact, %d jittered: want few, then many, and the same again", len(exact), len(jittered))
	}
}
