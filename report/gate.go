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
	// The verdicts short in the table, each why under it by its number:
	// a row stays one line.
	rows, whys := gateRows(g), []string{}
	for i, c := range g.Checks {
		if c.Why != "" {
			whys = append(whys, fmt.Sprintf("[%d] %s at %s, %s: %s", len(whys)+1, c.Rule, rows[i][1], c.Verdict, c.Why))
			rows[i][6] = fmt.Sprintf("%s [%d]", c.Verdict, len(whys))
		}
	}
	if err := renderTable(w, gateHeader, rows); err != nil {
		return err
	}
	for _, why := range whys {
		Wrap(w, 4, why+"\n")
	}
	for _, n := range g.Notes {
		Wrap(w, 6, "note: "+n+"\n")
	}
	fmt.Fprintln(w, gateOutcome(g))
	return nil
}

var gateHeader = []string{"rule", "level", "baseline", "candidate", "change", "± difference", "verdict"}

// gateRows are the gate's checks, a row each, as the terminal and the
// page show them.
func gateRows(g results.GateResult) [][]string {
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
	return rows
}

// gateOutcome is the gate's answer in a sentence.
func gateOutcome(g results.GateResult) string {
	switch {
	case g.Passed:
		return "gate passed: every rule holds"
	case g.Inconclusive:
		return "gate UNDECIDED: no rule failed, but the repeats cannot tell some moves from noise (see why)"
	}
	return "gate FAILED"
}

// GatePage is a gate to show on the comparison page: the two files'
// names and its result.
type GatePage struct {
	Baseline, Candidate string
	Result              results.GateResult
}

// gateSection is the page's account of a gate: the outcome, the table of
// checks and the notes.
func gateSection(g *GatePage) *htmlGate {
	t := &htmlTable{Header: gateHeader}
	for _, r := range gateRows(g.Result) {
		t.Rows = append(t.Rows, htmlRow{Cells: r})
	}
	return &htmlGate{Outcome: gateOutcome(g.Result), Passed: g.Result.Passed,
		Files: fmt.Sprintf("baseline %s, candidate %s", g.Baseline, g.Candidate), Table: t, Notes: g.Result.Notes}
}

// htmlGate is the gate's section of a page.
type htmlGate struct {
	Outcome, Files string
	Passed         bool
	Table          *htmlTable
	Notes          []string
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
