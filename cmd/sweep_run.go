package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/live"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// liveSweep is a live sweep ready to run: its levels, where its files go,
// the shard's start, and the resolved target.
type liveSweep struct {
	*sweepSetup
	label    string
	files    report.SweepFiles
	startAt  time.Time
	interval time.Duration
}

// prepare checks every flag and names every file before anything is
// sent.
func (o *sweepOptions) prepare(c *cobra.Command) (*liveSweep, error) {
	if o.healthPolicy != "" && !slices.Contains(results.HealthPolicies, o.healthPolicy) {
		return nil, usageErr("--health-policy must be one of %s, got %q", strings.Join(results.HealthPolicies, ", "), o.healthPolicy)
	}
	st, err := o.setup(c, time.Minute)
	if err != nil {
		return nil, err
	}
	shard, startAt, err := o.shard.parse()
	if err != nil {
		return nil, err
	}
	st.plan.Load.Shard = shard
	st.plan.SetLoad(st.plan.Load)
	if shard.Sharded() && o.repeat > 1 {
		return nil, usageErr("--repeat with --shard: run each repeat as its own sharded sweep (its own --seed), merge each repeat's shards (knee merge), then pool the merged sweeps (knee merge --repeats)")
	}
	if shard.Sharded() {
		// Every shard must run every level, whatever its own part shows,
		// and only shard 0 reads the server's view of the whole load.
		o.stopSat = false
		o.server.none = o.server.none || shard.Index > 0
		if shard.Index > 0 {
			o.server.gpuURLs = nil
		}
	}
	ls := &liveSweep{sweepSetup: st, startAt: startAt, interval: o.shard.interval}
	if ls.interval == 0 {
		ls.interval = o.load.Duration + o.load.Drain + 15*time.Second
	}
	if results.IsStdout(o.records) {
		return nil, usageErr("a sweep prints its rows on standard output: give --records a file")
	}
	others := map[string]string{"--records": o.records}
	ls.label, ls.files, err = o.sweepOutputs("sweep", others)
	if err != nil {
		return ls, err
	}
	if page := o.sinks.keepPage(ls.files.JSON); page != "" {
		if err := checkIO(map[string]string{"--dashboard (its final page)": page, "--records": o.records}, o.load.Inputs()); err != nil {
			return ls, err
		}
	}
	return ls, nil
}

// run measures the sweep's levels live.
func (o *sweepOptions) run(c *cobra.Command, _ []string) error {
	ls, err := o.prepare(c)
	if err != nil {
		return err
	}
	ss, err := openSession(c, &o.target, &o.sim, &o.sinks, &o.load, o.records)
	if err != nil {
		return err
	}
	defer ss.close()
	tgt, records := ss.tgt, ss.records
	sw := o.header(c, tgt, ls)
	lr, progress := o.liveRunner(c, tgt, ls)
	defer lr.Close()
	if err := o.server.checkReset(c.Context(), lr); err != nil {
		return err
	}
	sw, writeErr := o.measure(c, lr, progress, tgt, ls, sw, records)
	if err := writeSweep(c, sw, ls.files, "wrote"); err != nil {
		return err
	}
	if writeErr != nil {
		return withCode(ExitRuntime, writeErr)
	}
	if err := records.Close(); err != nil {
		return withCode(ExitRuntime, err)
	}
	if sw.EveryRequestFailed() {
		return &exitError{ExitFailed, errors.New("every request of every level failed")}
	}
	return nil
}

// header prints what the sweep is and returns it, empty of levels.
func (o *sweepOptions) header(c *cobra.Command, tgt *resolved, ls *liveSweep) *results.Sweep {
	out := c.OutOrStdout()
	base := o.target.levelConfig(tgt)
	ls.plan.Series.Describe(&base, ls.axis)
	sw := &results.Sweep{Label: ls.label, Config: base, Environment: environment(), Axis: ls.axis, Workload: o.load.Workload, SLO: ls.slo}
	if o.healthPolicy != results.HealthExclude {
		sw.HealthPolicy = o.healthPolicy
	}
	report.Wrapf(out, 6, "sweep %s · %s · model %s · %s workload · %s · %s of %s · %s per level\n",
		ls.label, tgt.where(), tgt.Target.Model, o.load.Workload, report.Sizes(base), levelsText(len(ls.loads)), ls.axis,
		report.Window(o.load.Duration, o.load.Requests, o.load.Voice.Calls, o.load.Workload))
	if ls.axis == "rate" {
		report.Wrap(out, 0, "levels are the target rate; offered is the rate the seeded schedule drew, which saturation is judged against; n is the requests measured (* under 20: p95 is their maximum)\n")
	}
	if o.repeat > 1 {
		fmt.Fprintf(out, "every level is measured %d times, interleaved: every level once, then again; the pooled table follows the last\nrepeat 1 of %d:\n", o.repeat, o.repeat)
	}
	report.LevelHeader(out, sw, report.Width(out))
	return sw
}

// liveRunner is the sweep's live runner: its progress on the terminal
// and the live view, its shard's start.
func (o *sweepOptions) liveRunner(c *cobra.Command, tgt *resolved, ls *liveSweep) (*live.Live, *report.Progress) {
	lr := o.target.runner(tgt, &o.server, o.sinks.on())
	lr.StartAt, lr.Interval = ls.startAt, ls.interval
	lr.Observe = o.sinks.observe(ls.label)
	progress := report.NewTerminalProgress(c.ErrOrStderr())
	lr.Progress = func(lv *bench.Level, p live.Progress) {
		offered := 0.0
		if ls.axis == "rate" {
			offered = lv.Load
		}
		level := fmt.Sprintf("level %d/%d (%g)", lv.Index+1, len(ls.loads), lv.Load)
		progress.Update(report.StatusOf(p, level, o.load.Duration))
		o.sinks.sinks.OnProgress(report.Moment{Label: ls.label, Level: level, Index: lv.Index, Levels: len(ls.loads),
			Load: lv.Load, Offered: offered, Window: o.load.Duration, Progress: p})
	}
	return lr, progress
}

// measure runs the levels, printing each row and rewriting the files as
// each ends, then the warnings and the knees. It returns the first error
// writing the files between levels.
func (o *sweepOptions) measure(c *cobra.Command, lr *live.Live, progress *report.Progress, tgt *resolved, ls *liveSweep,
	sw *results.Sweep, records *results.CheckedWriter) (*results.Sweep, error) {
	var writeErr error
	out := c.OutOrStdout()
	width := report.Width(out)
	sw.StartedAt = time.Now().UTC()
	levels := ls.plan.Series.Levels(lr, ls.axis, o.target.levelConfig(tgt))
	opts := bench.SweepOptions{Loads: ls.loads, StopOnSaturation: o.stopSat, Sweep: sw, Repeat: o.repeat,
		RepeatLevel: repeatLevels(ls.plan.Series, lr, ls.axis, o.target.levelConfig(tgt)),
		OnRepeat: func(rep int, l results.Level) {
			progress.Done()
			report.RepeatRow(out, sw, rep, o.repeat, l, width)
		},
		Level: func(i int, load float64) (*bench.Level, error) {
			lv, err := levels(i, load)
			return lv, seriesErr(err)
		},
		OnLevel: func(s *results.Sweep, l results.Level) {
			progress.Done()
			report.LevelRow(out, s, l, width)
			if err := ls.files.WriteData(s); err != nil && writeErr == nil {
				writeErr = err
			}
			o.sinks.sinks.OnSweep(s.Label, s)
		},
	}
	if records.Open() {
		opts.Records = records
	}
	sw = bench.Sweep(c.Context(), lr, opts)
	progress.Done()
	o.sinks.sinks.OnSweep(sw.Label, sw)
	fmt.Fprintln(out)
	if sw.Repeats != nil {
		report.PooledTable(out, sw)
	}
	report.LevelWarnings(out, sw)
	report.GPULevels(out, sw)
	report.Knees(out, sw)
	return sw, writeErr
}

// repeatLevels makes repeat rep of a series' level i at load.
func repeatLevels(s *bench.Series, p bench.Prober, axis string, cfg results.Config) func(rep, i int, load float64) (*bench.Level, error) {
	return func(rep, i int, load float64) (*bench.Level, error) {
		rate, concurrency := bench.At(axis, load)
		lv, err := s.RepeatLevel(rep, i, p, rate, concurrency, cfg)
		return lv, seriesErr(err)
	}
}

// writeSweep writes a sweep's files and says so: the tail of every
// command that makes one (sweep, predict, merge), said opening the line.
func writeSweep(c *cobra.Command, sw *results.Sweep, files report.SweepFiles, said string) error {
	written, warn, err := files.Write(sw)
	if err != nil {
		return withCode(ExitRuntime, err)
	}
	if warn != "" {
		fmt.Fprintf(c.ErrOrStderr(), "knee: %s\n", warn)
	}
	if len(written) > 0 {
		report.Wrap(c.OutOrStdout(), 6, fmt.Sprintf("%s %s\n", said, report.Listed(written)))
	}
	return nil
}
