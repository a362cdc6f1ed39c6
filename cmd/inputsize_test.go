package cmd

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestInputTokensAreServerTokens: --input-tokens 256 means 256 prompt
// tokens as the server counts them, chat template and nonce included, on
// both endpoints. Before calibration the simulator counted 270.
func TestInputTokensAreServerTokens(t *testing.T) {
	t.Parallel()
	inBubble(t, testInputTokensAreServerTokens)
}

func testInputTokensAreServerTokens(t *testing.T) {
	url := startSim(t, "", "")
	for _, endpoint := range []string{"chat", "completions"} {
		out := filepath.Join(t.TempDir(), "run.json")
		code, stdout, errOut := execute(t, "run", "--base-url", url, "--endpoint", endpoint, "--input-tokens", "256",
			"--max-tokens", "4", "--requests", "8", "--concurrency", "2", "--output", out, "--no-server-metrics")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", endpoint, code, stdout, errOut)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var r results.Run
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if got := r.Tokens.Input.Mean; math.Abs(got-256)/256 > 0.03 {
			t.Errorf("%s: prompts averaged %.1f server tokens, want 256 ± 3%%; notes %q", endpoint, got, r.Notes)
		}
		for _, w := range r.Warnings {
			t.Logf("%s: warning %s", endpoint, w)
		}
	}
}
