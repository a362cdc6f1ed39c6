package cmd

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
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
	t.Parallel()
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
	measured := filepath.Join(dir, "measured.json")
	inBubble(t, func(t *testing.T) {
		url := startSim(t, truthPath, "")
		if code, out, errOut := execute(t, "sweep", "--base-url", url, "--model", m.Name, "--concurrency", "1,4,16", "--requests", "32",
			"--input-tokens", "1024", "--input-tokens-stddev", "350", "--max-tokens", "32", "--max-tokens-stddev", "6", "--seed", "7",
			"--out-dir", dir, "--label", "measured", "--no-server-metrics"); code != 0 {
			t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errOut)
		}
	})
	fitted, calJSON := filepath.Join(dir, "fitted.yml"), filepath.Join(dir, "cal.json")
	code, out, errOut := execute(t, "calibrate", measured, "--sim-preset", spec, "-o", fitted, "--json", calJSON)
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
	if cal.Verdict != results.FitGood {
		t.Errorf("verdict %q (%v), want a good fit", cal.Verdict, cal.Problems)
	}
	code, out, errOut = execute(t, "predict", "--sim-models", fitted, "--concurrency", "1,16", "--requests", "20", "--input-tokens", "1024",
		"--max-tokens", "32", "--out-dir", dir, "--label", "again")
	if code != 0 {
		t.Fatalf("predict on the fitted models: exit %d\n%s\n%s", code, out, errOut)
	}
	// The prediction states how well its model fitted.
	again, err := results.ReadSweep(filepath.Join(dir, "again.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "calibrated against") || again.Prediction == nil || !strings.Contains(again.Prediction.Fit, "held-out") ||
		!slices.ContainsFunc(again.Levels[0].Run.Notes, func(n string) bool { return strings.Contains(n, "calibrated against") }) {
		t.Errorf("the prediction does not state its model's fit:\n%s\n%+v", out, again.Prediction)
	}
}

// TestPoorFitIsRefused: a server that is no GPU (knee sim's fixed-rate
// model: every request on its own timeline, load changes nothing) fitted
// with a GPU preset is refused: exit 1, no models file, the verdict and
// its reasons in the JSON. --accept-poor-fit writes it with the verdict,
// and a prediction from it says so.
func TestPoorFitIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inBubble(t, func(t *testing.T) {
		url := startSim(t, "", "")
		if code, out, errOut := execute(t, "sweep", "--base-url", url, "--model", "knee-sim-fixed", "--concurrency", "1,4,16,32", "--requests", "24",
			"--input-tokens", "512", "--max-tokens", "12", "--out-dir", dir, "--label", "fixed", "--no-server-metrics"); code != 0 {
			t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errOut)
		}
	})
	fitted, calJSON := filepath.Join(dir, "fit.yml"), filepath.Join(dir, "cal.json")
	args := []string{"calibrate", filepath.Join(dir, "fixed.json"), "--sim-preset", "h100-80gb/llama-3.1-8b", "-o", fitted, "--json", calJSON, "--max-evaluations", "80"}
	code, out, errOut := execute(t, args...)
	if code != ExitFailed {
		t.Fatalf("calibrate: exit %d, want %d\n%s\n%s", code, ExitFailed, out, errOut)
	}
	if _, err := os.Stat(fitted); err == nil {
		t.Error("a poor fit's models file was written")
	}
	var cal results.Calibration
	b, _ := os.ReadFile(calJSON)
	if err := json.Unmarshal(b, &cal); err != nil || cal.Verdict != results.FitPoor || len(cal.Problems) == 0 {
		t.Fatalf("calibration JSON: verdict %q, problems %v, %v", cal.Verdict, cal.Problems, err)
	}
	if !strings.Contains(out, "POOR") {
		t.Errorf("the report does not give the verdict:\n%s", out)
	}
	if code, out, errOut = execute(t, append(args, "--accept-poor-fit")...); code != 0 {
		t.Fatalf("--accept-poor-fit: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = execute(t, "predict", "--sim-models", fitted, "--concurrency", "1,4", "--requests", "10", "--out-dir", dir, "--label", "poor")
	if code != 0 || !strings.Contains(out, "POOR fit") {
		t.Errorf("a prediction from a poor fit: exit %d, does not say so:\n%s\n%s", code, out, errOut)
	}
}

// TestCalibrateStopsAtASignal: a signal stops a calibration within a
// second: exit 130, the best point so far in the JSON (marked
// interrupted), and no models file, as a search cut short is no fit.
func TestCalibrateStopsAtASignal(t *testing.T) {
	dir := t.TempDir()
	if code, out, errOut := execute(t, "predict", "--sim-preset", "h100-80gb/llama-3.1-8b", "--rates", "2,8,16,24", "--step-duration", "2m",
		"--input-tokens", "1024", "--max-tokens", "128", "--out-dir", dir, "--label", "measured"); code != 0 {
		t.Fatalf("predict: exit %d\n%s\n%s", code, out, errOut)
	}
	fitted, calJSON := filepath.Join(dir, "fit.yml"), filepath.Join(dir, "cal.json")
	var code int
	var out, errOut string
	var stopped time.Duration
	quiet.Live(t, 2, func(int) quiet.Try {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var signalled time.Time
		time.AfterFunc(1500*time.Millisecond, func() { signalled = time.Now(); cancel() })
		try := quiet.During(func() {
			code, out, errOut = executeCtx(t, ctx, "calibrate", filepath.Join(dir, "measured.json"), "--sim-preset", "a100-80gb/llama-3.1-8b",
				"-o", fitted, "--json", calJSON, "--max-evaluations", "5000")
			stopped = time.Since(signalled)
		})
		if code == ExitInterrupted && stopped <= time.Second {
			return quiet.Try{} // on time, however busy the host
		}
		return try
	})
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitInterrupted, out, errOut)
	}
	if stopped > time.Second {
		t.Errorf("the calibration went on %v after the signal", stopped)
	}
	var cal results.Calibration
	b, err := os.ReadFile(calJSON)
	if err != nil || json.Unmarshal(b, &cal) != nil || !cal.Interrupted || len(cal.Params) == 0 {
		t.Fatalf("calibration JSON: %v, %+v", err, cal)
	}
	if _, err := os.Stat(fitted); err == nil {
		t.Error("a stopped calibration wrote a models file")
	}
}
