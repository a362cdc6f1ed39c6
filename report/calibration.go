package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kneebench/knee/results"
)

// Calibration prints a calibration: the parameters with their confidence,
// every level's figures measured, replayed from the start and fitted, and
// the errors on the fitted and the held-out levels.
func Calibration(w io.Writer, c *results.Calibration) error {
	Wrapf(w, 6, "calibrated %s against %s (%d replays of the training levels)\n\n", c.Origin, c.Measured, c.Evaluations)
	var rows [][]string
	for _, p := range c.Params {
		rows = append(rows, []string{p.Name, sig(p.Start), sig(p.Value), paramConfidence(p, c.Interrupted)})
	}
	if err := renderTable(w, calibrationParamHeader, rows); err != nil {
		return err
	}
	rows = nil
	var skipped []string
	for _, r := range calibrationLevelRows(c) {
		rows = append(rows, r.cells)
		if r.skipped != "" {
			// The reason is a sentence: under the table, where it does not
			// widen a column every other row shares.
			skipped = append(skipped, fmt.Sprintf("level %s is skipped: %s", r.cells[0], r.skipped))
		}
	}
	fmt.Fprintln(w)
	if err := renderTable(w, calibrationLevelHeader, rows); err != nil {
		return err
	}
	for _, s := range skipped {
		Wrap(w, 6, s+"\n")
	}
	fmt.Fprintln(w)
	for _, g := range []struct {
		name string
		e    results.FitError
	}{{"fitted levels", c.Train}, {"held-out levels", c.HeldOut}} {
		if g.e.Levels == 0 {
			continue
		}
		Wrapf(w, 6, "%s (%d): mean absolute error %.1f%% from the start, %.1f%% fitted; worst %.1f%% (%s at %s)\n",
			g.name, g.e.Levels, g.e.StartPercent, g.e.FittedPercent, g.e.WorstPercent, g.e.WorstMetric, num(g.e.WorstLevelLoad, -1))
	}
	for _, n := range c.Notes {
		Wrapf(w, 6, "note: %s\n", n)
	}
	switch c.Verdict {
	case results.FitGood:
		fmt.Fprintf(w, "verdict: a good fit (within %.0f%% on the fitted and the held-out levels)\n", c.Tolerance)
	case results.FitPoor:
		fmt.Fprintln(w, "verdict: a POOR fit, not to be planned on:")
		for _, p := range c.Problems {
			Wrapf(w, 4, "  - %s\n", p)
		}
	}
	return nil
}

// CalibrationHeader is the comment that heads a calibrated models.yml:
// what it was fitted to, the parameters and the errors.
func CalibrationHeader(c *results.Calibration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Calibrated by knee calibrate against %s, starting from %s.\n", c.Measured, c.Origin)
	for _, p := range c.Params {
		state := "± " + sig(p.StdErr)
		switch {
		case p.Fixed:
			state = "fixed"
		case !p.Determined:
			state = "not determined by the data"
		}
		fmt.Fprintf(&b, "#   %s %s (%s; started at %s)\n", p.Name, sig(p.Value), state, sig(p.Start))
	}
	fmt.Fprintf(&b, "# Mean absolute error: %.1f%% on %d fitted levels", c.Train.FittedPercent, c.Train.Levels)
	if c.HeldOut.Levels > 0 {
		fmt.Fprintf(&b, ", %.1f%% on %d held-out levels", c.HeldOut.FittedPercent, c.HeldOut.Levels)
	}
	b.WriteString(".\n")
	if c.Verdict == results.FitPoor {
		b.WriteString("# A POOR fit, written with --accept-poor-fit:\n")
		for _, p := range c.Problems {
			fmt.Fprintf(&b, "#   %s\n", p)
		}
	}
	return b.String()
}

// sig formats a parameter with four significant digits.
// calibrationParamHeader and calibrationLevelHeader head a calibration's
// two tables, in the terminal and on the page alike.
var (
	calibrationParamHeader = []string{"parameter", "start", "fitted", "standard error"}
	calibrationLevelHeader = []string{"level", "set", "figure", "measured", "start (error)", "fitted (error)"}
)

// paramConfidence says how far a fitted parameter can be trusted: its
// standard error, or why there is none, and whether it is pinned at a
// bound of its range.
func paramConfidence(p results.FittedParam, interrupted bool) string {
	var conf string
	switch {
	case p.Fixed:
		conf = "fixed"
	case !p.Determined:
		conf = "not determined by this data"
		if p.StdErr > 0 {
			conf = "± " + sig(p.StdErr) + ", " + conf
		}
	case interrupted:
		conf = "the search was stopped"
	default:
		conf = fmt.Sprintf("± %s (%.0f%%)", sig(p.StdErr), 100*p.StdErr/p.Value)
	}
	if p.AtBound != "" {
		conf += ", pinned at its " + p.AtBound + " bound"
	}
	return conf
}

// levelRow is one row of a calibration's levels table; skipped, when
// set, is why the level took no part (its cells then say only "skipped").
type levelRow struct {
	cells   []string
	skipped string
}

// calibrationLevelRows are the rows of a calibration's levels table: a
// row per figure of each level, measured, from the start and fitted.
func calibrationLevelRows(c *results.Calibration) []levelRow {
	var rows []levelRow
	for _, l := range c.Levels {
		if l.Skipped != "" {
			rows = append(rows, levelRow{cells: []string{num(l.Load, -1), "skipped", "", "", "", ""}, skipped: l.Skipped})
			continue
		}
		set := "fit"
		if l.HeldOut {
			set = "held out"
		}
		for k, m := range l.Metrics {
			load, s := "", ""
			if k == 0 {
				load, s = num(l.Load, -1), set
			}
			rows = append(rows, levelRow{cells: []string{load, s, m.Metric, ms(m.Measured),
				ms(m.Start) + " (" + signedPct(results.PercentError(m.Start, m.Measured)) + ")",
				ms(m.Fitted) + " (" + signedPct(results.PercentError(m.Fitted, m.Measured)) + ")"}})
		}
	}
	return rows
}

func sig(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func signedPct(v float64) string { return fmt.Sprintf("%+.1f%%", v) }
