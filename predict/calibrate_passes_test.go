package predict

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// repeatedSweep pools sweeps of one workload on several seeds as a
// repeated sweep does: each level's run the first pass's, its repeats
// every pass's figures. scale, when set, multiplies one pass's latencies
// (a pass run while the host was slower).
func repeatedSweep(passes []*results.Sweep, slow int, scale float64) *results.Sweep {
	out := *passes[0]
	out.Levels = append([]results.Level(nil), passes[0].Levels...)
	for i := range out.Levels {
		var runs []*results.Run
		for p, sw := range passes {
			r := *sw.Levels[i].Run
			if p == slow {
				for _, s := range []*results.Summary{&r.Stats.TTFT, &r.Stats.ITL, &r.Stats.TPOT} {
					s.P50, s.P90, s.Mean = s.P50*scale, s.P90*scale, s.Mean*scale
				}
				r.Throughput.OutputTokensPerS /= scale
			}
			runs = append(runs, &r)
		}
		pooled := *out.Levels[i].Run
		pooled.Repeats = results.NewRepeats(runs)
		out.Levels[i].Run = &pooled
	}
	return &out
}

// TestCalibrateFitsEachRepeat (issue 57): a repeated sweep's repeats are
// fitted at once, each against its own schedule's replay, and each alone;
// every parameter says what each pass fitted and its standard error is
// never under their spread over √n. A pass 15% slower than the others
// (the host, not the model) widens the errors.
func TestCalibrateFitsEachRepeat(t *testing.T) {
	if testing.Short() {
		t.Skip("four fits in virtual time (11 s)")
	}
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	loads := []float64{1, 16}
	var passes []*results.Sweep
	for _, seed := range []uint64{11, 12, 13} {
		passes = append(passes, measuredSweepSeed(t, target, truth, loads, 32, seed))
	}
	fit := func(sw *results.Sweep) *results.Calibration {
		cal, _, err := Calibrate(context.Background(), CalibrateOptions{Measured: sw, Name: "repeated", Target: target,
			Origin: "h100-80gb/llama-3.1-8b", NoHoldOut: true, MaxEvaluations: 120})
		if err != nil {
			t.Fatal(err)
		}
		return cal
	}
	agree := fit(repeatedSweep(passes, -1, 1))
	if !strings.Contains(strings.Join(agree.Notes, " "), "each of the 3 repeats fitted alone") {
		t.Fatalf("notes %q", agree.Notes)
	}
	for _, p := range agree.Params {
		if len(p.PassValues) != 3 {
			t.Fatalf("%s: pass values %v", p.Name, p.PassValues)
		}
	}
	slow := fit(repeatedSweep(passes, 2, 1.15))
	for i, p := range slow.Params {
		spread := sampleSD(p.PassValues) / math.Sqrt(3)
		if p.StdErr < spread*(1-1e-9) {
			t.Errorf("%s: standard error %v under the passes' spread %v", p.Name, p.StdErr, spread)
		}
		if p.Name == "compute_efficiency" && p.StdErr <= agree.Params[i].StdErr {
			t.Errorf("%s: a pass 15%% slower left the standard error at %v (agreeing passes: %v)", p.Name, p.StdErr, agree.Params[i].StdErr)
		}
	}
}

// TestWiden: the spread of the passes' fits over √n replaces a narrower
// standard error and leaves a wider one; fewer than two passes change
// nothing.
func TestWiden(t *testing.T) {
	for _, c := range []struct {
		name   string
		se     float64
		fits   [][]float64
		want   float64
		source string
	}{
		{"spread wider", 0.001, [][]float64{{0.5}, {0.6}, {0.7}}, 0.1 / math.Sqrt(3), "repeats"},
		{"curvature wider", 0.2, [][]float64{{0.5}, {0.6}, {0.7}}, 0.2, ""},
		{"one pass", 0.001, [][]float64{{0.5}}, 0.001, ""},
	} {
		params := []results.FittedParam{{Name: "compute_efficiency", Value: 0.6, StdErr: c.se}}
		note := widen(params, []int{0}, c.fits)
		if strings.Contains(note, "outside") {
			t.Errorf("%s: a value among the passes' said to be outside them: %s", c.name, note)
		}
		if math.Abs(params[0].StdErr-c.want) > 1e-12 || params[0].StdErrFrom != c.source {
			t.Errorf("%s: standard error %v from %q, want %v from %q", c.name, params[0].StdErr, params[0].StdErrFrom, c.want, c.source)
		}
	}
}

// TestWidenSaysAFitOutsideEveryPass: a pooled fit outside the range of
// every repeat's own fit is named, with the repeats' mean.
func TestWidenSaysAFitOutsideEveryPass(t *testing.T) {
	params := []results.FittedParam{{Name: "memory_efficiency", Value: 0.923, StdErr: 0.23}}
	note := widen(params, []int{0}, [][]float64{{0.7445}, {0.6018}, {0.6507}, {0.6598}})
	if !strings.Contains(note, "outside every repeat's own fit: memory_efficiency 0.923 (the repeats' mean 0.664)") {
		t.Errorf("note %q", note)
	}
}
