package report

import (
	"fmt"
	"io"

	"github.com/kneebench/knee/results"
)

// Gate prints a regression gate's checks: for each rule and level, the
// baseline, the candidate, the change, the interval of the difference
// and the verdict; then the notes and the outcome.
func Gate(w io.Writer, base, cand string, g results.GateResult) error {
	fmt.Fprintf(w, "gate: baseline %s, candidate %s\n", base, cand)
	header := []string{"rule", "level", "baseline", "candidate", "change", "± difference", "verdict"}
	var rows [][]string
	for _, c := range g.Checks {
		level := "sweep"
		if c.Load != nil {
			level = fmt.Sprintf("%g", *c.Load)
		}
		verdict := c.Verdict
		if c.Why != "" {
			verdict += ": " + c.Why
		}
		rows = append(rows, []string{c.Rule, level, gateValue(c, c.Baseline), gateValue(c, c.Candidate), gateChange(c), gateNoise(c), verdict})
	}
	if err := renderTable(w, header, rows); err != nil {
		return err
	}
	for _, n := range g.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	switch {
	case g.Passed:
		fmt.Fprintln(w, "gate passed: every rule holds")
	case g.Inconclusive:
		fmt.Fprintln(w, "gate UNDECIDED: no rule failed, but the repeats cannot tell some moves from noise (see why)")
	default:
		fmt.Fprintln(w, "gate FAILED")
	}
	return nil
}

func gateValue(c results.GateCheck, v *float64) string {
	switch {
	case v == nil && c.Unit == "level":
		return "none"
	case v == nil:
		return "-"
	case c.Unit == "level":
		return fmt.Sprintf("%g", *v)
	}
	return num(*v, 3)
}

func gateChange(c results.GateCheck) string {
	if c.Change == nil {
		return "-"
	}
	switch c.Unit {
	case "%":
		return fmt.Sprintf("%+.1f%%", *c.Change)
	case "pp":
		return fmt.Sprintf("%+.2fpp", *c.Change)
	case "ms":
		return fmt.Sprintf("%+.1f ms", *c.Change)
	}
	return fmt.Sprintf("%+g levels", *c.Change)
}

func gateNoise(c results.GateCheck) string {
	switch {
	case c.Verdict == results.GateUnjudged:
		return "-"
	case c.Noise == 0:
		return "none"
	case c.Unit == "level":
		return fmt.Sprintf("%g levels", c.Noise)
	}
	return num(c.Noise, 3)
}
