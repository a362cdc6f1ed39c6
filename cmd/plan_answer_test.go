package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestPlanAnswerExplained (issue 38): a plan opens with its answer in one
// line; every row says the SLO bound nearest its limit at the target and
// how its GPU's cost model was tuned, and a row on a priori figures (an
// MI300X) says so in the table and the JSON; --calibrated-only leaves
// such rows out.
func TestPlanAnswerExplained(t *testing.T) {
	dir := t.TempDir()
	args := []string{"plan", "--rate", "20", "--input-tokens", "512", "--max-tokens", "128", "--gpus", "h100-80gb,mi300x", "--models", "llama-3.1-8b",
		"--window", "1m", "--slo", "ttft_p95:500,itl_p95:50", "--tp", "1", "--out-dir", dir, "--label", "p"}
	code, out, errOut := execute(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "answer: 1 × mi300xx1/llama-3.1-8b@bf16, $2.50/h, on a priori figures, limited by itl_p95:50") ||
		!strings.Contains(out, "mi300xx1/llama-3.1-8b@bf16 *") || !strings.Contains(out, "itl p95 ") {
		t.Errorf("the plan does not explain itself:\n%s", out)
	}
	var p results.Plan
	b, err := os.ReadFile(filepath.Join(dir, "p.json"))
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		t.Fatal(err)
	}
	cal := map[string]string{}
	for _, r := range p.Rows {
		cal[r.GPU] = r.Calibration
		if r.Meets && (r.AtTarget == nil || r.AtTarget.BindingBound != "itl_p95:50" || !(r.AtTarget.BindingValue > 0 && r.AtTarget.BindingValue < 50)) {
			t.Errorf("%s: binding %+v", r.Config, r.AtTarget)
		}
	}
	if cal["mi300x"] != results.CalibrationApriori || cal["h100-80gb"] != results.CalibrationFitted {
		t.Errorf("calibration states %v", cal)
	}
	code, out, _ = execute(t, append(args, "--calibrated-only", "--label", "q")...)
	if code != 0 || strings.Contains(out, "mi300x") || !strings.Contains(out, "answer: 1 × h100-80gbx1") {
		t.Errorf("--calibrated-only: exit %d\n%s", code, out)
	}
}
