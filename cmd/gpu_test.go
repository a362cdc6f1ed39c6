package cmd

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/results"
)

// TestRunGPUMetrics: knee run --gpu-metrics-url against knee sim's
// DCGM-shaped endpoint carries the window's energy from the counter, its
// mean power between the preset's idle draw (70 W) and limit (700 W), and
// the joules per output token that energy and the tokens give; knee
// predict of the same level gives its own from the same power model.
func TestRunGPUMetrics(t *testing.T) {
	slow(t)
	quiet.Wire(t, func() { testRunGPUMetrics(t) })
}

func testRunGPUMetrics(t *testing.T) {
	url := startSim(t, "", "")
	root := url[:len(url)-len("/v1")]
	dir := t.TempDir()
	out := filepath.Join(dir, "g.json")
	code, stdout, errOut := execute(t, "run", "--base-url", url, "--model", "knee-sim", "--gpu-metrics-url", root+"/gpu/metrics", "--rate", "5", "--duration", "2s",
		"--input-tokens", "200", "--max-tokens", "20", "--ignore-eos", "--no-server-metrics", "--output", out)
	if code != 0 && code != ExitFailed {
		t.Fatalf("exit %d\n%s%s", code, stdout, errOut)
	}
	r, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	g := r.GPU
	if g == nil || len(g.GPUs) != 1 || g.GPUs[0].EnergySource != "counter" {
		t.Fatalf("gpu figures %+v", g)
	}
	if g.PowerMeanW < 70 || g.PowerMeanW > 700 || g.EnergyJ <= 0 {
		t.Errorf("mean power %v W, energy %v J", g.PowerMeanW, g.EnergyJ)
	}
	if want := g.EnergyJ / float64(r.Tokens.OutputTotal); math.Abs(g.JoulesPerOutputToken-want) > 1e-9*want {
		t.Errorf("J per output token %v, want %v", g.JoulesPerOutputToken, want)
	}

	code, stdout, errOut = execute(t, "predict", "--sim-preset", "h100-80gb/llama-3.1-8b", "--rates", "5", "--step-duration", "2s",
		"--input-tokens", "200", "--max-tokens", "20", "--ignore-eos", "--out-dir", dir, "--label", "p")
	if code != 0 {
		t.Fatalf("predict: exit %d\n%s%s", code, stdout, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "p.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := sw.Levels[0].Run.GPU; p == nil || p.JoulesPerOutputToken <= 0 || p.PowerMeanW < 70 || p.PowerMeanW > 700 {
		t.Errorf("predicted gpu figures %+v", p)
	}
}
