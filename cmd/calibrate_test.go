package cmd

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator"
	"github.com/kneebench/knee/simulator/server"
)

// TestCalibrateLiveSweep sweeps the simulator live with a known tuning of
// the H100 8B preset, calibrates from the shipped preset, and checks that
// the fit finds the tuning again and that the models file it writes is
// one knee predict takes. The live sweep's client and HTTP path add a
// millisecond or two to every TTFT and the wall clock's timer slack to
// every step, which the step overhead absorbs; the tolerances say so.
func TestCalibrateLiveSweep(t *testing.T) {
	slow(t)
	dir := t.TempDir()
	spec := "h100-80gb/llama-3.1-8b"
	f, err := simulator.PresetModels(spec)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]float64{"compute_efficiency": 0.62, "memory_efficiency": 0.7, "step_overhead_ms": 3.5, "per_sequence_overhead_ms": 0.06}
	m := &f.Models[0]
	m.Efficiency = &server.EfficiencySpec{Compute: truth["compute_efficiency"], Memory: truth["memory_efficiency"]}
	m.Latency = &server.LatencySpec{StepOverheadMs: truth["step_overhead_ms"], PerSequenceOverheadMs: truth["per_sequence_overhead_ms"]}
	yml, err := f.YAML("test truth")
	if err != nil {
		t.Fatal(err)
	}
	truthPath := filepath.Join(dir, "truth.yml")
	if err := os.WriteFile(truthPath, yml, 0o644); err != nil {
		t.Fatal(err)
	}
	url := startSim(t, truthPath, "")
	code, out, errOut := execute(t, "sweep", "--base-url", url, "--model", m.Name, "--concurrency", "1,4,16", "--requests", "32",
		"--input-tokens", "1024", "--input-tokens-stddev", "350", "--max-tokens", "32", "--max-tokens-stddev", "6", "--seed", "7",
		"--out-dir", dir, "--label", "measured", "--no-server-metrics")
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errOut)
	}
	fitted, calJSON := filepath.Join(dir, "fitted.yml"), filepath.Join(dir, "cal.json")
	code, out, errOut = execute(t, "calibrate", filepath.Join(dir, "measured.json"), "--sim-preset", spec, "-o", fitted, "--json", calJSON)
	t.Logf("\n%s", out)
	if code != 0 {
		t.Fatalf("calibrate: exit %d\n%s", code, errOut)
	}
	var cal results.Calibration
	b, err := os.ReadFile(calJSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cal); err != nil {
		t.Fatal(err)
	}
	// Thirty-two requests a level pin down the compute efficiency well
	// and the rest loosely (TTFT p90 of 32 requests moves by milliseconds
	// from run to run); the fit must say so: the truth lies within three
	// of its reported standard errors, or within 5% where it claims more.
	for _, p := range cal.Params {
		want := truth[p.Name]
		tol := math.Max(0.05*want, 3*p.StdErr)
		if p.StdErr == 0 || math.Abs(p.Value-want) > tol {
			t.Errorf("%s: fitted %.4g ± %.2g, the simulator ran with %.4g", p.Name, p.Value, p.StdErr, want)
		}
	}
	if c := cal.Params[0]; !c.Determined || math.Abs(c.Value-truth[c.Name]) > 0.1*truth[c.Name] {
		t.Errorf("compute efficiency %.4g (determined %v), want within 10%% of %.4g", c.Value, c.Determined, truth[c.Name])
	}
	if cal.HeldOut.Levels != 1 || cal.HeldOut.FittedPercent >= cal.HeldOut.StartPercent {
		t.Errorf("held out %d levels: error %.1f%% fitted, %.1f%% from the start; the fit should do better on the level it did not see",
			cal.HeldOut.Levels, cal.HeldOut.FittedPercent, cal.HeldOut.StartPercent)
	}
	head, _ := os.ReadFile(fitted)
	if !strings.HasPrefix(string(head), "# Calibrated by knee calibrate against ") {
		t.Errorf("the models file does not say where it came from:\n%.300s", head)
	}
	code, out, errOut = execute(t, "predict", "--sim-models", fitted, "--concurrency", "1,16", "--requests", "20", "--input-tokens", "1024",
		"--max-tokens", "32", "--out-dir", dir, "--label", "again")
	if code != 0 {
		t.Fatalf("predict on the fitted models: exit %d\n%s\n%s", code, out, errOut)
	}
}
