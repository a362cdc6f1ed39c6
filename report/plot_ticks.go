package report

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// levelTicks puts a tick at every measured level, labelled with its load.
type levelTicks []float64

// Ticks implements plot.Ticker.
func (t levelTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, v := range t {
		if v >= lo && v <= hi {
			out = append(out, plot.Tick{Value: v, Label: tickLabel(v)})
		}
	}
	return out
}

// linearTicks are about six labelled ticks at round steps (1, 2, 2.5 or 5
// times a power of ten), with unlabelled ones between.
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: tickLabel(lo)}}
	}
	step := niceStep((hi - lo) / 6)
	var out []plot.Tick
	for i := math.Ceil(lo/step*2 - 1e-9); i/2*step <= hi+step*1e-9; i++ {
		v := i / 2 * step
		label := ""
		if math.Mod(i, 2) == 0 {
			label = tickLabel(roundTo(v, step))
		}
		out = append(out, plot.Tick{Value: v, Label: label})
	}
	return out
}

// niceStep is the round step (1, 2, 2.5 or 5 times a power of ten) at or
// above raw.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// roundTo takes away the float error a tick's multiple of step carries
// (0.30000000000000004 reads 0.3).
func roundTo(v, step float64) float64 {
	digits := max(0, 2-int(math.Floor(math.Log10(step))))
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// logTicks label 1, 2 and 5 times each power of ten (only the powers when
// the axis spans more than three decades), with unlabelled ticks at the
// other integers, plus any marked value, such as the SLO threshold, so
// the line a reader compares against has its number on the axis.
type logTicks struct{ marked []float64 }

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return linearTicks{}.Ticks(lo, hi)
	}
	sparse := hi/lo > 1000
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		p := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := p * m
			if v < lo || v > hi {
				continue
			}
			label := ""
			if m == 1 || (!sparse && (m == 2 || m == 5)) {
				label = tickLabel(roundTo(v, p))
			}
			out = append(out, plot.Tick{Value: v, Label: label})
		}
	}
	labelAllIfFew(out, func(v float64) float64 { return math.Pow(10, math.Floor(math.Log10(v))) })
	for _, m := range t.marked {
		if m < lo || m > hi {
			continue
		}
		at := -1
		for i, tk := range out {
			if math.Abs(tk.Value-m) <= m*1e-9 {
				at = i
			}
		}
		// The marked value's label, and none on the neighbours it would
		// collide with (within a fifth of a decade).
		for i, tk := range out {
			if math.Abs(math.Log10(tk.Value/m)) < 0.2 {
				out[i].Label = ""
			}
		}
		if at >= 0 {
			out[at].Label = tickLabel(m)
		} else {
			out = append(out, plot.Tick{Value: m, Label: tickLabel(m)})
		}
	}
	return out
}

// labelAllIfFew labels every tick when fewer than three carry a label:
// an axis within one decade (40 to 90 ms) would read 50 alone. decade
// is the power of ten a value's label is rounded to.
func labelAllIfFew(out []plot.Tick, decade func(float64) float64) {
	n := 0
	for _, tk := range out {
		if tk.Label != "" {
			n++
		}
	}
	if n >= 3 {
		return
	}
	for i, tk := range out {
		out[i].Label = tickLabel(roundTo(tk.Value, decade(tk.Value)))
	}
}

// tickLabel prints a tick's value as briefly as it is exact: 2500, not
// 2500.00; 0.25; 1.5k past ten thousand.
func tickLabel(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case a >= 10_000 && math.Mod(v, 1000) == 0:
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	case a >= 10_000 && math.Mod(v, 100) == 0:
		return fmt.Sprintf("%.1fk", v/1000)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
