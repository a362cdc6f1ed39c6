package predict

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestCalibrationVerdict: a fit within tolerance passes; one past it, one
// bent to its training levels, and one that ends worse than it started
// (79% against 50%, on llm-d, once passed unsaid) are poor, each saying
// why.
func TestCalibrationVerdict(t *testing.T) {
	cases := []struct {
		name           string
		train, heldOut results.FitError
		verdict        string
		says           string
	}{
		{"good", results.FitError{Levels: 4, StartPercent: 30, FittedPercent: 6}, results.FitError{Levels: 2, StartPercent: 28, FittedPercent: 7}, results.FitGood, ""},
		{"past the tolerance", results.FitError{Levels: 4, StartPercent: 30, FittedPercent: 22}, results.FitError{}, results.FitPoor, "past the 15% tolerance"},
		{"worse than it started", results.FitError{Levels: 4, StartPercent: 10, FittedPercent: 12.5}, results.FitError{}, results.FitPoor, "worse than it started"},
		{"bent to its training", results.FitError{Levels: 4, StartPercent: 30, FittedPercent: 3}, results.FitError{Levels: 2, StartPercent: 5, FittedPercent: 9}, results.FitPoor, "worse than the start did"},
	}
	for _, c := range cases {
		cal := &calibration{o: CalibrateOptions{Origin: "a preset"}}
		out := &results.Calibration{Train: c.train, HeldOut: c.heldOut}
		cal.judge(out)
		said := strings.Join(out.Problems, "; ")
		if out.Verdict != c.verdict || !strings.Contains(said, c.says) {
			t.Errorf("%s: %s (%s), want %s saying %q", c.name, out.Verdict, said, c.verdict, c.says)
		}
	}
}
