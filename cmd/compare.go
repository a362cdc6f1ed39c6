package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

func newCompareCmd() *cobra.Command {
	var output, gate string
	var gateIgnore []string
	var allowInconclusive bool
	c := &cobra.Command{
		Use:   "compare A.json B.json ...",
		Short: "Overlay sweeps and compare their knees, or gate a candidate on a baseline",
		Long: `compare overlays several sweeps' curves and sets their knees side by side.

With --gate RULES, it gates a candidate on a baseline instead: knee compare
--gate RULES BASELINE CANDIDATE checks every rule at every load both
measured and exits 0 when every rule holds, 1 when one fails (a figure
moved the wrong way past its allowance by more than the 95% interval of
the difference), and 4 when it cannot judge: a move inside the interval
(inconclusive; --gate-allow-inconclusive passes it), a level that failed
or whose client was unhealthy, or two files that measured different
things, which it names. Levels measured with knee sweep --repeat carry
intervals; levels of one repeat compare their figures as they are. With
-o NAME.html it also writes the two sweeps' comparison page, the gate's
verdicts on top.`,
		Example: `  knee compare results/L40S.json results/H100.json -o results/compare.png
  knee compare --gate 'ttft_sched.p95:+10%,throughput:-5%,slo_knee:-1 level,errors:+0.5pp' baseline.json results/candidate.json`,
		Args: needFiles(1, 0, "one or more sweep or run files (two with --gate: the baseline, then the candidate)"),
		RunE: runtimeErrors(func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("gate") && strings.TrimSpace(gate) == "" {
				// An empty gate would pass whatever changed.
				return usageErr("--gate '' names no rule: give the rules a release is gated on, e.g. 'ttft_sched.p95:+10%%,throughput:-5%%'")
			}
			if gate != "" {
				return runGate(c, gateOptions{spec: gate, ignore: gateIgnore, allowInconclusive: allowInconclusive, page: output}, args)
			}
			if len(gateIgnore) > 0 {
				return usageErr("--gate-ignore goes with --gate")
			}
			return runCompare(c, output, args)
		}),
	}
	c.Flags().StringVarP(&output, "output", "o", "", "write the overlaid plot to this PNG; with --gate, the comparison page with the gate's verdicts (NAME.html)")
	c.Flags().StringVar(&gate, "gate", "", "gate CANDIDATE on BASELINE by these rules, comma-separated: FIGURE:±AMOUNT with % (relative), pp (errors), ms (a latency percentile) or level (slo_knee, saturation); the sign is the way the figure gets worse")
	c.Flags().BoolVar(&allowInconclusive, "gate-allow-inconclusive", false, "with --gate, pass when no rule fails though the repeats cannot tell some moves from noise (by default such a gate is undecided: exit 4)")
	c.Flags().StringSliceVar(&gateIgnore, "gate-ignore", nil, "with --gate, what baseline and candidate may measure differently (e.g. model, when a calibrated prediction names it otherwise): "+strings.Join(results.GateFieldNames(), ", "))
	markOutputs(c, "output")
	return c
}

// runCompare overlays the sweeps' curves and sets their knees side by
// side, the plot to output when given.
func runCompare(c *cobra.Command, output string, args []string) error {
	if ext := strings.ToLower(filepath.Ext(output)); ext == ".html" || ext == ".htm" || ext == ".json" || ext == ".csv" {
		// The bytes would be a PNG's whatever the name says.
		return usageErr("--output %s: knee compare draws a PNG; for a page comparing them, knee report %s -o %s", output, strings.Join(args, " "), output)
	}
	if err := checkIO(map[string]string{"--output": output}, argInputs(args)); err != nil {
		return err
	}
	files, err := readInputs(c, args)
	if err != nil {
		return err
	}
	sweeps, err := results.DecodeSweeps(args, files)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	if err := report.Compare(out, sweeps); err != nil {
		return err
	}
	if output != "" {
		var b bytes.Buffer
		if err := report.ComparePlot(&b, sweeps); err != nil {
			return err
		}
		if err := results.WriteOutput(output, b.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", output)
	}
	return nil
}

// gateOptions are knee compare --gate's: the rules, the fields excused,
// whether an undecided gate passes, and the page to write ("" for none).
type gateOptions struct {
	spec, page        string
	ignore            []string
	allowInconclusive bool
}

// runGate is knee compare --gate: rules checked before either file is
// read, the files checked to have measured the same thing, then every
// rule; the page, when asked, written before the exit code answers.
func runGate(c *cobra.Command, o gateOptions, args []string) error {
	spec, ignore, allowInconclusive := o.spec, o.ignore, o.allowInconclusive
	if ext := strings.ToLower(filepath.Ext(o.page)); o.page != "" && ext != ".html" && ext != ".htm" {
		return usageErr("--output %s: with --gate, knee compare writes the comparison page with the gate's verdicts: name it NAME.html", o.page)
	}
	if len(args) != 2 {
		return usageErr("--gate compares two files, BASELINE then CANDIDATE; got %d", len(args))
	}
	rules, err := results.ParseGateRules(spec)
	if err != nil {
		return usageErr("--gate: %v", err)
	}
	for _, f := range ignore {
		if !slices.Contains(results.GateFieldNames(), f) {
			return usageErr("--gate-ignore %q: not a field the gate compares (%s)", f, strings.Join(results.GateFieldNames(), ", "))
		}
	}
	outputs := map[string]string{}
	if o.page != "" {
		outputs["--output"] = o.page
	}
	if err := checkIO(outputs, argInputs(args)); err != nil {
		return err
	}
	files, err := readInputs(c, args)
	if err != nil {
		return err
	}
	sweeps := make([]*results.Sweep, 2)
	for i, p := range args {
		if sweeps[i], err = results.DecodeSweepOrRun(p, files[i]); err != nil {
			return err
		}
	}
	if m := results.Mismatch(sweeps[0], sweeps[1], rules, ignore); m != nil {
		return withCode(ExitMismatch, fmt.Errorf("%s and %s cannot be gated: %w (--gate-ignore excuses a field on purpose)", args[0], args[1], m))
	}
	g := results.Gate(sweeps[0], sweeps[1], rules)
	if err := report.Gate(c.OutOrStdout(), args[0], args[1], g); err != nil {
		return err
	}
	if err := writeGatePage(c, o.page, sweeps, args, g); err != nil {
		return err
	}
	switch {
	case g.Passed, g.Inconclusive && allowInconclusive:
		return nil
	case g.Inconclusive:
		return &exitError{ExitMismatch, errors.New("the gate is undecided: the repeats cannot tell a move past a rule's allowance from noise (more repeats decide it; --gate-allow-inconclusive passes it)")}
	case slices.ContainsFunc(g.Checks, func(c results.GateCheck) bool { return c.Verdict == results.GateFails }):
		return &exitError{ExitFailed, errors.New("the gate failed: see the table")}
	}
	return &exitError{ExitMismatch, errors.New("the gate could not judge every rule (a level failed or its client was unhealthy): see the table")}
}

// writeGatePage writes the gated sweeps' comparison page with the
// gate's verdicts to page, when one is asked.
func writeGatePage(c *cobra.Command, page string, sweeps []*results.Sweep, args []string, g results.GateResult) error {
	if page == "" {
		return nil
	}
	var b bytes.Buffer
	in := report.HTMLInput{Sweeps: sweeps, Version: version(), Gate: &report.GatePage{Baseline: args[0], Candidate: args[1], Result: g}}
	if err := report.HTML(&b, in); err != nil {
		return err
	}
	if err := results.WriteOutput(page, b.Bytes()); err != nil {
		return withCode(ExitRuntime, err)
	}
	fmt.Fprintf(c.OutOrStdout(), "wrote %s\n", page)
	return nil
}

func newPresetsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "presets",
		Short: "List the hardware, model and sweep presets with their numbers",
		Args:  noArgs,
		RunE: runtimeErrors(func(c *cobra.Command, _ []string) error {
			return report.Presets(c.OutOrStdout())
		}),
	}
}
