package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestCalibrationSaysWhyALevelIsSkipped: a skipped level keeps the
// table's six columns and its reason is a line under the table, so a
// long reason does not widen a column or add an empty one.
func TestCalibrationSaysWhyALevelIsSkipped(t *testing.T) {
	c := &results.Calibration{
		Measured: "m.json", Model: "m", Origin: "h100-80gb/llama-3.1-8b",
		Params: []results.FittedParam{{Name: "compute_efficiency", Start: 0.5, Value: 0.62, StdErr: 0.02, Determined: true}},
		Levels: []results.CalibratedLevel{
			{Load: 1, Metrics: []results.MetricFit{{Metric: "ttft_p50_ms", Measured: 31.6, Start: 35.8, Fitted: 30.9}}},
			{Load: 16, Skipped: "the client limited this level's figures (host-starved)"},
		},
		Train: results.FitError{Levels: 1, StartPercent: 13.2, FittedPercent: 2.3, WorstPercent: 2.3, WorstMetric: "ttft_p50_ms", WorstLevelLoad: 1},
	}
	var b bytes.Buffer
	if err := Calibration(&b, c); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "level 16 is skipped: the client limited this level's figures (host-starved)") {
		t.Errorf("the skipped level's reason is missing:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| 16") && strings.Count(line, "|") != 7 {
			t.Errorf("the skipped level's row does not have the table's six columns: %q", line)
		}
		if strings.Contains(line, "|  |") {
			t.Errorf("an empty column: %q", line)
		}
	}
}
