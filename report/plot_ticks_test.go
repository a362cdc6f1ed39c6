package report

import (
	"cmp"
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

// TestTicks: labels are as brief as they are exact, a log axis names the
// SLO it is marked with (and not its crowded neighbours), and a linear
// axis has enough labelled ticks at round steps.
func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi float64
		log    []float64 // marked values on a log axis; nil: linear
		want   []string
	}{
		{"linear thousands", 0, 2750, nil, []string{"0", "500", "1000", "1500", "2000", "2500"}},
		{"linear fractions", 0, 1.1, nil, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}},
		{"linear ten-thousands", 0, 45000, nil, []string{"0", "10k", "20k", "30k", "40k"}},
		{"log with the SLO", 30, 6000, []float64{300}, []string{"50", "100", "300", "500", "1000", "2000", "5000"}},
		{"log with an SLO between", 30, 6000, []float64{450}, []string{"50", "100", "200", "450", "1000", "2000", "5000"}},
		{"log over four decades", 1, 20000, []float64{250}, []string{"1", "10", "100", "250", "1000", "10k"}},
		// Within a decade 1-2-5 would label 50 alone: every digit then.
		{"log within a decade", 39, 90, []float64{}, []string{"40", "50", "60", "70", "80", "90"}},
		{"log within a decade, small", 0.031, 0.089, []float64{}, []string{"0.04", "0.05", "0.06", "0.07", "0.08"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			ticks := linearTicks{}.Ticks(tc.lo, tc.hi)
			if tc.log != nil {
				ticks = logTicks{marked: tc.log}.Ticks(tc.lo, tc.hi)
			}
			slices.SortFunc(ticks, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
			for _, tk := range ticks {
				if tk.Label != "" {
					got = append(got, tk.Label)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("labels %q, want %q", got, tc.want)
			}
		})
	}
}
