package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

type calibrateOptions struct {
	sim      simFlags
	model    string
	output   string
	jsonOut  string
	fix      string
	holdout  string
	maxEval  int
	parallel int
	// tolerance is the error a good fit stays within; acceptPoor writes a
	// poor fit's models file all the same; slots fits max_num_seqs too.
	tolerance  float64
	acceptPoor bool
	slots      bool
}

func newCalibrateCmd() *cobra.Command {
	o := &calibrateOptions{}
	c := &cobra.Command{
		Use:   "calibrate MEASURED.json",
		Short: "Fit the simulator's cost model to a measured run or sweep",
		Long: `calibrate replays every level of a measured run or sweep (from a real server,
or any knee result file) on the simulator's scheduler core in virtual time: the
same load, window, warm-up and seed, with prompts and answers of the lengths
the server reported (the call workload call for call). It searches the cost
model's free parameters (compute and memory efficiency, step overhead,
per-sequence overhead) from the model of --sim-preset or --sim-models,
minimising the squared log errors of TTFT p50 and p90, mean TPOT, ITL p50
and p90 and output throughput over the fitted levels (gonum's Nelder-Mead).

It prints each parameter with its standard error, every level's figures
measured, replayed from the start and fitted, and the error on levels held out
of the fit (by default every third level from the second, when there are at
least three). With -o it writes the calibrated models.yml, which knee sim
--sim-models and knee predict --sim-models take as it is, with the fit's errors
in it, which every prediction made from it states.

A fit it cannot stand behind is refused: errors past --tolerance on the
fitted or held-out levels, held-out levels predicted worse than before the
fit, or a parameter pinned at the edge of its range (the server is not the
kind of machine the preset describes: another GPU, or a CPU engine such as
llama.cpp's, which knee cannot model). It then exits 1 and writes no models
file unless --accept-poor-fit. --fit-slots also chooses max_num_seqs, for a
server with few slots (llama.cpp's --parallel).`,
		Example: `  knee calibrate results/h100-vllm.json --sim-preset h100-80gb/llama-3.1-8b -o h100-8b.yml
  knee predict --sim-models h100-8b.yml --rates 2,4,8,16 --duration 5m`,
		Args: needFiles(1, 1, "one measured run or sweep file"),
		RunE: runtimeErrors(o.run),
	}
	o.sim.register(c)
	fs := c.Flags()
	fs.StringVar(&o.model, "model", "", "model of the models file to calibrate (default: its first)")
	fs.StringVarP(&o.output, "output", "o", "", "write the calibrated models.yml here")
	fs.StringVar(&o.jsonOut, "json", "", "write the calibration (parameters, every level's figures, errors) as JSON here")
	markOutputs(c, "output", "json")
	fs.StringVar(&o.fix, "fix", "", "parameters held at their start, comma-separated: "+strings.Join(tunableNames(), ", "))
	fs.StringVar(&o.holdout, "holdout", "", `levels kept out of the fit, 1-based and comma-separated, or "none" (default: every third from the second)`)
	fs.IntVar(&o.maxEval, "max-evaluations", 600, "bound on the search's replays of the fitted levels")
	fs.IntVar(&o.parallel, "parallel", 0, "levels replayed at once (default: one per CPU)")
	fs.Float64Var(&o.tolerance, "tolerance", predict.DefaultTolerance, "mean absolute error in percent a good fit stays within, on the fitted and the held-out levels")
	fs.BoolVar(&o.acceptPoor, "accept-poor-fit", false, "write the models file of a fit judged poor all the same (it carries the verdict)")
	fs.BoolVar(&o.slots, "fit-slots", false, "also choose the slot count (max_num_seqs), among the powers of two up to the preset's")
	return c
}

func tunableNames() []string {
	var n []string
	for _, t := range predict.Tunables {
		n = append(n, t.Name)
	}
	return n
}

// options reads the measured file and builds the calibration's options.
func (o *calibrateOptions) options(c *cobra.Command, args []string) (predict.CalibrateOptions, string, error) {
	var opts predict.CalibrateOptions
	if err := checkIO(map[string]string{"--output": o.output, "--json": o.jsonOut}, argInputs(args)); err != nil {
		return opts, "", err
	}
	if o.maxEval < 1 || o.parallel < 0 || !(o.tolerance > 0) || o.tolerance > 1000 {
		return opts, "", usageErr("--max-evaluations must be positive, --parallel not negative and --tolerance a percentage above 0")
	}
	files, err := readInputs(c, args[:1])
	if err != nil {
		return opts, "", err
	}
	measured, err := results.DecodeSweepOrRun(args[0], files[0])
	if err != nil {
		return opts, "", withCode(ExitRuntime, err)
	}
	if measured.Config.Pooled() {
		return opts, "", usageErr("%s drove --endpoint %s, whose batches knee calibrate does not replay yet: calibrate on a generating run", args[0], measured.Config.Endpoint)
	}
	// The replay asks for the lengths the run asked for; answers cut
	// short by tool calls would fit the cost model to work the server
	// never did. (Thinking is output like any other: a reasoning run's
	// lengths replay as they are.)
	if measured.Config.Mix != "" {
		return opts, "", usageErr("%s sent a mix of classes (%s), which knee calibrate does not replay yet: calibrate on a run of one kind of request", args[0], measured.Config.Mix)
	}
	for _, l := range measured.Levels {
		if l.Run != nil && l.Run.Images != nil {
			return opts, "", usageErr("%s: its requests sent images, which knee calibrate does not replay yet", args[0])
		}
		if l.Run != nil && l.Run.ToolCalls != nil {
			return opts, "", usageErr("%s: its answers called tools (%d at load %g), which knee calibrate does not replay: calibrate on a run without --tools", args[0], l.Run.ToolCalls.Requests, l.Load)
		}
	}
	target, origin, err := simTarget(c.Context(), &o.sim, o.model, transport.Endpoint(measured.Config.Endpoint))
	if err != nil {
		return opts, "", err
	}
	opts = predict.CalibrateOptions{Measured: measured, Name: args[0], Target: target, Origin: origin,
		Parallel: o.parallel, MaxEvaluations: o.maxEval, Tolerance: o.tolerance, FitSlots: o.slots}
	if o.fix != "" {
		opts.Fixed = strings.Split(o.fix, ",")
	}
	if opts.HoldOut, opts.NoHoldOut, err = predict.ParseHoldOut(o.holdout, len(measured.Levels)); err != nil {
		return opts, "", usageErr("--holdout: %w", err)
	}
	return opts, origin, nil
}

func (o *calibrateOptions) run(c *cobra.Command, args []string) error {
	opts, origin, err := o.options(c, args)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	report.Wrapf(out, 6, "replaying %d measured levels of %s in virtual time on %s (model %s)\n", len(opts.Measured.Levels), args[0], origin, opts.Target.Model)
	ticker := report.NewCalibrateTicker(time.Now())
	opts.Evaluated = ticker.Evaluated
	stop := ticker.Show(c.ErrOrStderr())
	cal, fitted, err := predict.Calibrate(c.Context(), opts)
	stop()
	switch {
	case c.Context().Err() != nil && cal == nil:
		return withCode(ExitRuntime, fmt.Errorf("the calibration was stopped before it began to search, so nothing is written: %w", results.ErrInterrupted))
	case c.Context().Err() == nil && err != nil:
		return usageErr("%w", err)
	}
	if err := report.Calibration(out, cal); err != nil {
		return err
	}
	if err := o.writeJSON(out, cal); err != nil {
		return err
	}
	switch {
	case c.Context().Err() != nil:
		// Stopped: the best point so far, in the report and the JSON; a
		// search cut short is no fit, so no models file.
		fmt.Fprintln(out, "stopped before the search ended: the parameters above are the best point it reached; no models file is written")
		return nil
	case cal.Verdict == results.FitPoor && !o.acceptPoor:
		if o.output != "" {
			fmt.Fprintf(out, "%s is not written: the fit is poor (--accept-poor-fit writes it all the same, with its verdict)\n", o.output)
		}
		return &exitError{ExitFailed, errors.New("the fit is poor (the verdict above says why): no models file is written")}
	case o.output == "":
		return nil
	}
	yml, err := fitted.YAML(origin + ", calibrated")
	if err != nil {
		return err
	}
	if err := results.WriteOutput(o.output, append([]byte(report.CalibrationHeader(cal)), yml...)); err != nil {
		return withCode(ExitRuntime, err)
	}
	fmt.Fprintf(out, "wrote %s (knee sim --sim-models %s, knee predict --sim-models %s)\n", o.output, o.output, o.output)
	return nil
}

// writeJSON writes the calibration to --json, when given.
func (o *calibrateOptions) writeJSON(out io.Writer, cal *results.Calibration) error {
	if o.jsonOut == "" {
		return nil
	}
	b, err := json.MarshalIndent(cal, "", "  ")
	if err != nil {
		return err
	}
	if err := results.WriteOutput(o.jsonOut, append(b, '\n')); err != nil {
		return withCode(ExitRuntime, err)
	}
	fmt.Fprintf(out, "wrote %s\n", o.jsonOut)
	return nil
}
