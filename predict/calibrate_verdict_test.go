package predict

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestCalibrationVerdict: a fit within tolerance passes; one past it, one
// bent to its training levels, one that ends worse than it started
// (79% against 50%, on llm-d, once passed unsaid) and one whose data
// determines none of its parameters (one level, once "a good fit") are
// poor, each saying why.
func TestCalibrationVerdict(t *testing.T) {
	cases := []struct {
		name           string
		train, heldOut results.FitError
		verdict        string
		says           string
		undetermined   bool
	}{
		{"good", results.FitError{Levels: 4, StartPercent: 30, FittedPercent: 6}, results.FitError{Levels: 2, StartPercent: 28, FittedPercent: 7}, results.FitGood, "", false},
		{"past the tolerance", results.FitError{Levels: 4, StartPercent: 30, FittedPercent: 22}, results.FitError{}, results.FitPoor, "past the 15% tolerance", false},
		{"worse than it started", results.FitError{Levels: 4, StartPercent: 10, FittedPercent: 12.5}, results.FitError{}, results.FitPoor, "worse than it started", false},
		{"bent to its training", results.FitError{Levels: 4, StartPercent: 30, FittedPercent: 3}, results.FitError{Levels: 2, StartPercent: 5, FittedPercent: 9}, results.FitPoor, "worse than the start did", false},
		{"nothing determined", results.FitError{Levels: 1, StartPercent: 1.5, FittedPercent: 1.5}, results.FitError{}, results.FitPoor,
			"no parameter searched is determined by this data (1 level fitted)", true},
	}
	for _, c := range cases {
		cal := &calibration{o: CalibrateOptions{Origin: "a preset"}}
		out := &results.Calibration{Train: c.train, HeldOut: c.heldOut}
		for i, tn := range Tunables {
			out.Params = append(out.Params, results.FittedParam{Name: tn.Name, Value: tn.Min + (tn.Max-tn.Min)/2,
				Fixed: i == 3, Determined: !c.undetermined && i == 0})
		}
		cal.judge(out)
		said := strings.Join(out.Problems, "; ")
		if out.Verdict != c.verdict || !strings.Contains(said, c.says) {
			t.Errorf("%s: %s (%s), want %s saying %q", c.name, out.Verdict, said, c.verdict, c.says)
		}
	}
}
