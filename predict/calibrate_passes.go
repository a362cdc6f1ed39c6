package predict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kneebench/knee/results"
)

// Fitting a repeated sweep. One sweep's levels share its host's state
// (and a client's per-request cost), so the curvature of one fit sees
// none of what moves between sweeps: four live sweeps of a known tuning
// fitted compute efficiency 1.1 to 2.5 standard errors from the truth.
// A repeated sweep (--repeat) ran its passes at other times: the fit is
// made to all of them at once, each against its own schedule's replay
// (pooled figures against one schedule's replay put a parameter outside
// every pass's own fit), and each is also fitted alone, the spread of
// those fits bounding the standard errors from below.

// passSweeps are the measured sweep's repeats as sweeps of their own,
// each usable level's run on that repeat's schedule seed, with each
// repeat's figures by level (its CalibrationMetrics). None when a usable
// level was not repeated, or repeated fewer than twice whole.
func (c *calibration) passSweeps(usable []int) ([]*results.Sweep, []map[int]map[string]float64) {
	n := math.MaxInt
	for _, i := range usable {
		rp := c.o.Measured.Levels[i].Run.Repeats
		if rp == nil {
			return nil, nil
		}
		n = min(n, len(rp.Each))
	}
	if n < 2 {
		return nil, nil
	}
	sweeps, figures := make([]*results.Sweep, n), make([]map[int]map[string]float64, n)
	for r := range n {
		sw := *c.o.Measured
		sw.Levels = slices.Clone(sw.Levels)
		figures[r] = map[int]map[string]float64{}
		for _, i := range usable {
			each := sw.Levels[i].Run.Repeats.Each[r]
			if each.Interrupted || len(each.Calibration) == 0 {
				return nil, nil
			}
			run := *sw.Levels[i].Run
			run.Repeats, run.Config.Seed = nil, each.Seed
			sw.Levels[i].Run, figures[r][i] = &run, each.Calibration
		}
		sweeps[r] = &sw
	}
	return sweeps, figures
}

// buildPasses sets up the repeats of a repeated sweep as calibrations of
// their own (each repeat's figures, replayed on its own schedule): the fit
// is then made to every repeat at once, each against its own replay, not
// pooled figures against one schedule's replay. It keeps none when the
// sweep was not repeated or a repeat cannot be replayed level for level.
func (c *calibration) buildPasses(usable []int) {
	sweeps, figures := c.passSweeps(usable)
	for r, sw := range sweeps {
		o := c.o
		o.Measured, o.Evaluated = sw, nil
		pc := &calibration{ctx: c.ctx, o: o, spec: c.spec, start: c.start, free: c.free, train: c.train, held: c.held, figures: figures[r]}
		if got := pc.replayLevels(&results.Calibration{}); !slices.Equal(got, usable) {
			c.passes = nil
			return
		}
		c.passes = append(c.passes, pc)
	}
}

// passFits fits every repeat alone on the same training levels and
// returns each pass's fitted tunables; nil when the sweep was not
// repeated or the fits were stopped.
func (c *calibration) passFits() [][]float64 {
	var fits [][]float64
	for _, pc := range c.passes {
		pc.slots = c.slots
		best, _, err := pc.search()
		if err != nil || c.ctx.Err() != nil {
			return nil
		}
		fits = append(fits, best)
	}
	return fits
}

// widen sets each searched parameter's pass values and, where the spread
// of the passes' fits over √n is wider than its standard error from the
// curvature, that spread as its standard error. It returns a note saying
// what the passes found.
func widen(params []results.FittedParam, free []int, fits [][]float64) string {
	if len(fits) < 2 {
		return ""
	}
	var parts, outside []string
	for _, i := range free {
		vals := make([]float64, len(fits))
		for r, f := range fits {
			vals[r] = f[i]
		}
		p := &params[i]
		p.PassValues = vals
		se := sampleSD(vals) / math.Sqrt(float64(len(vals)))
		if se > p.StdErr {
			p.StdErr, p.StdErrFrom = se, "repeats"
			p.Determined = se < 0.5*math.Abs(p.Value)
		}
		lo, hi := slices.Min(vals), slices.Max(vals)
		parts = append(parts, fmt.Sprintf("%s %.3g–%.3g", p.Name, lo, hi))
		if p.Value < lo || p.Value > hi {
			outside = append(outside, fmt.Sprintf("%s %.3g (the repeats' mean %.3g)", p.Name, p.Value, mean(vals)))
		}
	}
	note := fmt.Sprintf("each of the %d repeats fitted alone: %s; a parameter's standard error is the larger of the "+
		"fit's curvature and the spread of those fits over √%d (the spread sees what one pass's levels share, the "+
		"curvature does not)", len(fits), strings.Join(parts, ", "), len(fits))
	if len(outside) > 0 {
		// The pooled fit replays one schedule against figures pooled
		// from every repeat's: where it leaves them all, say so.
		note += fmt.Sprintf("; outside every repeat's own fit: %s", strings.Join(outside, ", "))
	}
	return note
}

// mean is the mean of vals.
func mean(vals []float64) float64 {
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	return sum / float64(len(vals))
}

// sampleSD is the sample standard deviation of vals (n − 1).
func sampleSD(vals []float64) float64 {
	m := mean(vals)
	ss := 0.0
	for _, v := range vals {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(len(vals)-1))
}
