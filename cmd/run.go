package cmd

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/live"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

type runOptions struct {
	target  targetFlags
	load    loadFlags
	sim     simFlags
	server  serverFlags
	shard   shardFlags
	output  string
	records string
	// slicesCSV is where the run's time slices go as CSV.
	slicesCSV string
	cpuProf   string
	quiet     bool
	sinks     sinkFlags
	// repeat is how many times the load is measured (--repeat).
	repeat int
}

func newRunCmd() *cobra.Command { return newRunCmdWith(&runOptions{}) }

// newRunCmdWith is knee run over o, so that knee k8s job can check a pod's
// flags with the parser and checks the pod will use.
func newRunCmdWith(o *runOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "run",
		Short: "Benchmark an OpenAI-compatible endpoint at one load",
		Long: `run drives one load against the target and reports latencies measured from
the send (TTFT, ITL, TPOT, E2E) and from the scheduled arrival (TTFT sched,
E2E sched, queue wait), throughput, and the client's own health.

--workload voice runs multi-turn calls instead: calls arrive at --rate per
second, each with its own long system prompt; turn 1 warms the prefix and
turns 2.. are measured.

With no --base-url (and no $OPENAI_BASE_URL), knee starts its built-in
simulator and benchmarks that.`,
		Example: `  knee run --base-url http://localhost:8000/v1 --rate 5 --duration 60s --input-tokens 512 --max-tokens 128
  knee run --concurrency 16 --requests 500 --output run.json
  knee run --workload voice --rate 0.5 --duration 60s --system-prompt-tokens 18000`,
		Args: goodputArgs(&o.load),
		RunE: runtimeErrors(o.run),
	}
	o.target.register(c)
	o.load.register(c)
	o.sim.register(c)
	o.server.register(c)
	o.shard.register(c, false)
	o.sinks.register(c)
	c.Flags().BoolVar(&o.quiet, "quiet", false, "print neither the report nor progress (e.g. with --output - in a pod, whose log is then the JSON alone)")
	o.load.registerWorkload(c, "requests (independent requests), voice (multi-turn calls) or conversations (a --dataset's recorded conversations replayed as calls)")
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the whole result to this JSON file")
	c.Flags().IntVar(&o.repeat, "repeat", 1, "measure the load this many times, each from its own seed and prompts, and report the pooled figures with 95% intervals across the repeats")
	c.Flags().StringVar(&o.records, "records", "", "stream one JSON line per request to this file")
	c.Flags().StringVar(&o.slicesCSV, "slices-csv", "", "write the window's time slices (--slice) to this CSV file, one row each with the server's gauges")
	c.Flags().StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile of the client to this file (for go tool pprof)")
	_ = c.Flags().MarkHidden("cpuprofile")
	markOutputs(c, "output", "records", "slices-csv", "cpuprofile")
	withLoadFile(c, &o.load)
	return c
}

// prepare checks every flag and output before anything is sent.
func (o *runOptions) prepare(c *cobra.Command) (*bench.Prepared, time.Time, error) {
	if err := bench.CheckWorkload(o.load.Workload); err != nil {
		return nil, time.Time{}, usageErr("%w", err)
	}
	o.load.serverHistory(o.target.TargetSpec)
	plan, err := o.load.prepare(c, o.target.Endpoint)
	if err != nil {
		return nil, time.Time{}, err
	}
	plan.Series.Need = bench.DatasetNeed(plan.Load, []float64{plan.Load.Rate}, plan.Load.Rate > 0)
	if err := usage(o.load.CheckHost(bench.InFlightBound())); err != nil {
		return nil, time.Time{}, err
	}
	if err := o.target.validate(c); err != nil {
		return nil, time.Time{}, err
	}
	shard, startAt, err := o.shard.parse()
	if err != nil {
		return nil, time.Time{}, err
	}
	switch {
	case o.repeat < 1 || o.repeat > maxRepeat:
		return nil, time.Time{}, usageErr("--repeat must be 1–%d, got %d", maxRepeat, o.repeat)
	case o.repeat > 1 && shard.Sharded():
		return nil, time.Time{}, usageErr("--repeat with --shard: run each repeat as its own sharded run (its own --seed), merge each repeat's shards (knee merge), then pool the merged files (knee merge --repeats)")
	}
	plan.Load.Shard = shard
	plan.SetLoad(plan.Load)
	// Only shard 0 reads the server's view of the whole load.
	o.server.none = o.server.none || shard.Index > 0
	if shard.Index > 0 {
		o.server.gpuURLs = nil
	}
	// Every output is checked before anything is measured, so a run is
	// never measured and then lost.
	outputs := map[string]string{"--output": o.output, "--records": o.records, "--slices-csv": o.slicesCSV}
	if o.slicesCSV != "" && o.load.Slice == 0 {
		return nil, time.Time{}, usageErr("--slices-csv with --slice 0: there are no slices to write")
	}
	if page := o.sinks.keepPage(o.output); page != "" {
		outputs["--dashboard (its final page)"] = page
	}
	if err := checkIO(outputs, o.load.Inputs()); err != nil {
		return nil, time.Time{}, err
	}
	if n := countStdout(o.output, o.records, o.slicesCSV); n > 1 {
		return nil, time.Time{}, usageErr("only one of --output, --records and --slices-csv can be standard output")
	}
	return plan, startAt, nil
}

func (o *runOptions) run(c *cobra.Command, _ []string) error {
	plan, startAt, err := o.prepare(c)
	if err != nil {
		return err
	}
	ss, err := openSession(c, &o.target, &o.sim, &o.sinks, &o.load, o.records)
	if err != nil {
		return err
	}
	defer ss.close()
	tgt, records := ss.tgt, ss.records
	if o.cpuProf != "" {
		stop, err := startCPUProfile(o.cpuProf)
		if err != nil {
			return withCode(ExitRuntime, err)
		}
		defer stop()
	}
	out, errOut := c.OutOrStdout(), c.ErrOrStderr()
	if countStdout(o.output, o.records, o.slicesCSV) > 0 {
		// Standard output carries the data; the report goes to stderr.
		out = c.ErrOrStderr()
	}
	if o.quiet {
		out, errOut = io.Discard, io.Discard
	}
	res, err := o.measure(c, plan, tgt, startAt, records, errOut)
	if err != nil {
		return err
	}
	return o.finish(c, out, res, records)
}

// measure runs the level live, its progress on errOut and the live view.
func (o *runOptions) measure(c *cobra.Command, plan *bench.Prepared, tgt *resolved, startAt time.Time, records *results.CheckedWriter,
	errOut io.Writer) (*results.Run, error) {
	lr := o.target.runner(tgt, &o.server, o.sinks.on())
	lr.Observe = o.sinks.observe("run")
	defer lr.Close()
	if err := o.server.checkReset(c.Context(), lr); err != nil {
		return nil, err
	}
	lr.StartAt = startAt
	progress := report.NewTerminalProgress(errOut)
	load := max(plan.Load.Rate, float64(plan.Load.Concurrency))
	lr.Progress = func(_ *bench.Level, p live.Progress) {
		progress.Update(report.StatusOf(p, "", plan.Load.Duration))
		o.sinks.sinks.OnProgress(report.Moment{Label: "run", Level: "run", Load: load, Offered: plan.Load.Rate,
			Window: plan.Load.Duration, Progress: p})
	}
	var runs []*results.Run
	for rep := 0; rep < o.repeat && (rep == 0 || c.Context().Err() == nil); rep++ {
		level, err := plan.Series.RepeatLevel(rep, 0, lr, plan.Load.Rate, plan.Load.Concurrency, o.target.levelConfig(tgt))
		if err != nil {
			return nil, seriesErr(err)
		}
		if records.Open() {
			level.Records = records
		}
		if o.repeat > 1 {
			level.Repeat = rep + 1
		}
		one, err := lr.Run(c.Context(), level)
		progress.Done()
		if err != nil {
			return nil, usageErr("%w", err)
		}
		if o.repeat > 1 {
			fmt.Fprintf(errOut, "repeat %d of %d: %s\n", rep+1, o.repeat, report.RepeatLine(one))
		}
		runs = append(runs, one)
	}
	res := runs[0]
	if len(runs) > 1 {
		pooled, err := results.PoolRepeats(runs)
		if err != nil {
			return nil, withCode(ExitRuntime, err)
		}
		if len(runs) < o.repeat {
			pooled.Warnings = append(pooled.Warnings, fmt.Sprintf("only %d of the %d repeats ran: the run was stopped", len(runs), o.repeat))
		}
		res = pooled
	}
	o.sinks.sinks.OnLevel("run", results.Level{Load: load, Run: res})
	return res, nil
}

// finish prints the run, writes its file and says how it ended.
func (o *runOptions) finish(c *cobra.Command, out io.Writer, res *results.Run, records *results.CheckedWriter) error {
	if err := report.RunAndServer(out, res); err != nil {
		return err
	}
	if res.Repeats != nil {
		if err := report.RepeatFigures(out, res); err != nil {
			return err
		}
	}
	if o.output != "" && keepsOld(o.output, res) {
		fmt.Fprintf(out, "kept %s: the run was stopped before it measured a request, and an empty result would replace it\n", o.output)
	} else if o.output != "" {
		if err := results.WriteJSONTo(o.output, c.OutOrStdout(), res); err != nil {
			return withCode(ExitRuntime, fmt.Errorf("writing %s: %w", o.output, err))
		}
		if !results.IsStdout(o.output) {
			fmt.Fprintf(out, "wrote %s\n", o.output)
		}
	}
	if err := records.Close(); err != nil {
		return withCode(ExitRuntime, err)
	}
	if o.slicesCSV != "" {
		b, err := res.SlicesCSV(math.NaN())
		switch {
		case err != nil:
		case results.IsStdout(o.slicesCSV):
			_, err = c.OutOrStdout().Write(b)
		default:
			err = results.WriteOutput(o.slicesCSV, b)
		}
		if err != nil {
			return withCode(ExitRuntime, fmt.Errorf("writing %s: %w", o.slicesCSV, err))
		}
		if !results.IsStdout(o.slicesCSV) {
			fmt.Fprintf(out, "wrote %s\n", o.slicesCSV)
		}
	}
	switch {
	case res.Requests.OK == 0 && res.Requests.Failed > 0:
		return &exitError{ExitFailed, errors.New("every request failed")}
	case res.Requests.OK == 0 && res.Requests.Interrupted > 0 && !res.Interrupted:
		return &exitError{ExitFailed, errors.New("every request was cut by the drain timeout before it finished: nothing was measured")}
	case res.Interrupted && c.Context().Err() == nil:
		// Stopped by the client itself (its memory full of requests a
		// stalled server never answered), not by a signal.
		return &exitError{ExitFailed, errors.New("the run stopped before its end (see its warning): what it measured is written")}
	}
	return nil
}

// countStdout counts the paths that name standard output.
func countStdout(paths ...string) int {
	n := 0
	for _, p := range paths {
		if results.IsStdout(p) {
			n++
		}
	}
	return n
}

// seriesErr is an error preparing a series' level: the user's to fix
// (their dataset's bounds) or the run's.
func seriesErr(err error) error {
	if errors.Is(err, bench.ErrFilteredOut) {
		return usageErr("--dataset %w", err)
	}
	return err
}
