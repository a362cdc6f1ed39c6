package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// The default sweep, for the built-in simulator: 2,048-token prompts make
// prefill the bottleneck of its H100-class model, so the knee falls at a
// rate a 2-core machine can drive and simulate faithfully.
var (
	defaultSweepRates  = []float64{1, 2, 3, 4, 6, 8, 12, 16}
	defaultSweepInput  = 2048
	defaultSweepOutput = 64
)

// sweepFlags are the flags knee sweep and knee predict share: what each
// level sends, the levels, the SLO and where the files go.
type sweepFlags struct {
	target      targetFlags
	load        loadFlags
	voice       voiceFlags
	sim         simFlags
	server      serverFlags
	workload    string
	rates       string
	concurrency string
	step        time.Duration
	label       string
	outDir      string
	slo         sloFlags
	stopSat     bool
	preset      string
	records     string
	// speedups are a trace's levels, as multiples of its own speed.
	speedups string
}

// sweepOptions are knee sweep's: the shared flags, the shard of a split
// load, and what an unhealthy level does to the knees.
type sweepOptions struct {
	sweepFlags
	shard        shardFlags
	healthPolicy string
	dash         dashboardFlag
}

func newSweepCmd() *cobra.Command {
	o := &sweepOptions{}
	c := &cobra.Command{
		Use:   "sweep",
		Short: "Measure a series of load levels and find the knees",
		Long: `sweep runs one level per rate (open loop) or per concurrency (closed loop):
warm-up, a reset of the server's summary when it has one, the measured window,
and the drain. A row is printed as each level ends. Then it names two knees:
the SLO knee (the largest load meeting the SLO: provision against it) and the
curvature knee (where latency bends, whatever the SLO), plus the level where
throughput stopped keeping up. Results go to <out-dir>/<label>.json, .csv
and .png, rewritten after every level so an interrupted sweep keeps what it
measured.

With no target, knee starts its built-in simulator and sweeps it with
2,048-token prompts at 1–16 requests per second.`,
		Example: `  knee sweep
  knee sweep --base-url http://gpu:8000/v1 --rates 1,2,4,8,16 --step-duration 60s --label h100
  knee sweep --workload voice --preset l40s --base-url http://l40s:30000/v1 --label L40S`,
		Args: goodputArgs(&o.load),
		RunE: runtimeErrors(o.run),
	}
	o.register(c, 15*time.Second, "1m for calls")
	o.shard.register(c, true)
	o.dash.register(c)
	c.Flags().StringVar(&o.healthPolicy, "health-policy", results.HealthExclude, "what a level whose client was unhealthy (client-limited, or host-starved: the whole machine stalled) does to the knees: exclude it, warn (judge it, and say so) or ignore (judge it)")
	return c
}

// register declares the flags knee sweep and knee predict share, with the
// command's default window per level and why it is that.
func (o *sweepFlags) register(c *cobra.Command, step time.Duration, why string) {
	o.target.register(c)
	o.load.registerShared(c)
	o.voice.register(c, 4, "5s,7s")
	o.sim.register(c)
	o.server.register(c)
	fs := c.Flags()
	fs.StringVar(&o.workload, "workload", "requests", "requests, voice, or conversations (a --dataset's conversations replayed as calls)")
	fs.StringVar(&o.rates, "rates", "", "open-loop levels: arrivals (or calls) per second, e.g. 1,2,4,8")
	fs.StringVar(&o.concurrency, "concurrency", "", "closed-loop levels: streams, e.g. 1,4,16,64")
	fs.DurationVar(&o.step, "step-duration", step, "measured window of each level (0 with --requests to count requests instead; "+why+")")
	fs.StringVar(&o.label, "label", "", "name of the result files (default sweep-<date>-<time>)")
	fs.StringVar(&o.outDir, "out-dir", "results", "folder of the result files")
	o.slo.register(c, "ttft_sched_p95:300", "what a level", true)
	fs.BoolVar(&o.stopSat, "stop-on-saturation", false, "end the sweep once two levels in a row miss the SLO")
	fs.StringVar(&o.preset, "preset", "", "seed the rates and SLO from a sweep preset (see knee presets)")
	fs.StringVar(&o.records, "records", "", "stream one JSON line per request of every level to this file (each with its level)")
	fs.StringVar(&o.speedups, "trace-speedups", "", "a trace's levels as multiples of its own speed, e.g. 0.5,1,2,4 (default; --rates instead asks for mean rates)")
	c.MarkFlagsMutuallyExclusive("rates", "concurrency")
}

func parseList(s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a positive number", part)
		}
		if len(out) > 0 && v <= out[len(out)-1] {
			return nil, fmt.Errorf("levels must increase (%g after %g)", v, out[len(out)-1])
		}
		out = append(out, v)
	}
	return out, nil
}

// levels resolves the sweep's axis and loads from the flags or a preset.
func (o *sweepFlags) levels(c *cobra.Command) (string, []float64, error) {
	for _, name := range []string{"rates", "concurrency", "trace-speedups"} {
		if fl := c.Flags().Lookup(name); fl != nil && c.Flags().Changed(name) && strings.TrimSpace(fl.Value.String()) == "" {
			return "", nil, usageErr("--%s is empty: give levels, e.g. 1,2,4", name)
		}
	}
	switch {
	case o.rates != "":
		l, err := parseList(o.rates)
		if err != nil {
			return "", nil, usageErr("--rates: %v", err)
		}
		return "rate", l, nil
	case o.concurrency != "":
		l, err := parseList(o.concurrency)
		if err != nil {
			return "", nil, usageErr("--concurrency: %v", err)
		}
		for _, v := range l {
			if v != float64(int(v)) {
				return "", nil, usageErr("--concurrency: %g is not a whole number", v)
			}
		}
		if o.workload != "requests" {
			return "", nil, usageErr("the %s workload is open loop: give --rates", o.workload)
		}
		return "concurrency", l, nil
	case o.preset != "":
		p, ok := presets.SweepNamed(o.preset)
		if !ok {
			return "", nil, usageErr("unknown sweep preset %q (see knee presets)", o.preset)
		}
		if !c.Flags().Changed("slo") {
			o.slo.spec = num(p.SLOMillis)
		}
		// Against the built-in simulator, a preset also chooses what it
		// serves, so the sweep shows where such a box would bend.
		if o.target.baseURL == "" && o.sim.preset == "" {
			o.sim.preset = p.Hardware + "/" + p.Model
		}
		return "rate", p.Rates, nil
	case o.workload == "voice":
		return "", nil, usageErr("a voice sweep needs --rates (calls per second) or --preset (see knee presets)")
	case o.workload == "conversations":
		return "", nil, usageErr("a conversations sweep needs --rates (conversations per second)")
	}
	return "rate", defaultSweepRates, nil
}

// sweepSetup is a sweep's levels, ready to run live or in virtual time.
type sweepSetup struct {
	axis  string
	loads []float64
	plan  *levelPlan
	slo   results.SLO
}

// setup checks the shared flags and builds the levels. callStep, when set,
// is the window of a level of calls when --step-duration is not given.
func (o *sweepFlags) setup(c *cobra.Command, callStep time.Duration) (*sweepSetup, error) {
	if err := checkWorkload(o.workload); err != nil {
		return nil, err
	}
	axis, loads, err := o.levels(c)
	if err != nil {
		return nil, err
	}
	if o.step < 0 {
		return nil, usageErr("--step-duration must not be negative")
	}
	slo, err := o.slo.parse(c, o.load.goodput)
	if err != nil {
		return nil, err
	}
	fs := c.Flags()
	defaulted := o.rates == "" && o.concurrency == "" && o.preset == ""
	if defaulted && o.workload == "requests" && !fs.Changed("input-tokens") && !fs.Changed("dataset") && !fs.Changed("prompt") {
		o.load.inputTokens = defaultSweepInput
		if !fs.Changed("max-tokens") {
			o.load.maxTokens = defaultSweepOutput
		}
	}
	if o.workload != "requests" && !fs.Changed("step-duration") && callStep > 0 {
		// A call lasts its turns and gaps (about 20 s by default): a
		// window of 15 s holds too few whole calls to read.
		o.step = callStep
	}
	o.load.duration = o.step
	if o.load.requests > 0 && !fs.Changed("step-duration") {
		o.load.duration = 0
	}
	if axis == "rate" {
		o.load.rate = loads[0]
	} else {
		o.load.concurrency = int(loads[0])
	}
	if o.workload != "requests" && o.voice.calls > 0 && !fs.Changed("step-duration") {
		o.load.duration = 0
	}
	plan, err := buildLevelPlan(c, &o.load, &o.voice, o.workload)
	if err != nil {
		return nil, err
	}
	if pd := plan.dataset(); pd != nil && pd.TraceRate() > 0 {
		if loads, err = o.traceLevels(c, axis, loads, pd.TraceRate()); err != nil {
			return nil, err
		}
		if !fs.Changed("step-duration") {
			// A trace's level is the whole trace, unless bounded.
			o.load.duration, plan.load.Duration = 0, 0
			plan.setLoad(plan.load)
		}
	} else if o.speedups != "" {
		return nil, usageErr("--trace-speedups applies to a trace (a --dataset whose lines carry timestamps)")
	}
	plan.series.Need = bench.DatasetNeed(plan.load, loads, axis == "rate")
	if err := o.target.validate(); err != nil {
		return nil, err
	}
	if err := plan.checkCompletions(o.target.endpoint); err != nil {
		return nil, err
	}
	return &sweepSetup{axis: axis, loads: loads, plan: plan, slo: slo}, nil
}

// run measures the sweep's levels live.
func (o *sweepOptions) run(c *cobra.Command, _ []string) error {
	if o.healthPolicy != "" && !slices.Contains(results.HealthPolicies, o.healthPolicy) {
		return usageErr("--health-policy must be one of %s, got %q", strings.Join(results.HealthPolicies, ", "), o.healthPolicy)
	}
	st, err := o.setup(c, time.Minute)
	if err != nil {
		return err
	}
	axis, loads, plan := st.axis, st.loads, st.plan
	shard, startAt, err := o.shard.parse()
	if err != nil {
		return err
	}
	plan.load.Shard = shard
	plan.setLoad(plan.load)
	if shard.Sharded() {
		// Every shard must run every level, whatever its own part shows,
		// and only shard 0 reads the server's view of the whole load.
		o.stopSat = false
		o.server.none = o.server.none || shard.Index > 0
	}
	interval := o.shard.interval
	if interval == 0 {
		interval = o.load.duration + o.load.drain + 15*time.Second
	}
	label, paths, err := o.sweepOutputs("sweep", map[string]string{"--records": o.records})
	if err != nil {
		return err
	}
	if err := o.dash.start(c); err != nil {
		return err
	}
	defer o.dash.finish()
	ctx := c.Context()
	tgt, err := o.target.resolve(ctx, c, &o.sim)
	if err != nil {
		return err
	}
	defer tgt.stop()
	if err := tgt.fitsContext(longestRequest(&o.load, &o.voice, o.workload == "voice")); err != nil {
		return err
	}
	out, errOut := c.OutOrStdout(), c.ErrOrStderr()
	progress := newProgress(errOut)
	if results.IsStdout(o.records) {
		return usageErr("a sweep prints its rows on standard output: give --records a file")
	}
	live := o.target.live(tgt, &o.server, o.dash.on())
	defer live.Close()
	live.StartAt, live.Interval = startAt, interval
	live.Progress = func(lv *bench.Level, p bench.Progress) {
		offered := 0.0
		if axis == "rate" {
			offered = lv.Load
		}
		level := fmt.Sprintf("level %d/%d (%g)", lv.Index+1, len(loads), lv.Load)
		progress.Update(statusOf(p, level, o.load.duration))
		o.dash.status(p, level, lv.Index, len(loads), o.load.duration, offered)
	}
	var records *checkedWriter
	if o.records != "" {
		f, err := results.OpenStreamContext(c.Context(), o.records)
		if err != nil {
			return withCode(ExitRuntime, fmt.Errorf("--records %s: %w", o.records, err))
		}
		records = &checkedWriter{w: f, path: o.records}
		defer records.Close()
	}

	base := o.target.config(tgt.target.BaseURL, tgt.target.Model)
	base.BuiltinSim = tgt.builtin
	plan.series.Describe(&base, axis)
	sw := &results.Sweep{Label: label, Config: base, Environment: environment(), Axis: axis, Workload: o.workload, SLO: st.slo}
	if o.healthPolicy != results.HealthExclude {
		sw.HealthPolicy = o.healthPolicy
	}
	where := results.RedactURL(tgt.target.BaseURL)
	if tgt.builtin {
		where = "the built-in simulator (" + where + ")"
	}
	fmt.Fprintf(out, "sweep %s · %s · model %s · %s workload · %s · %d levels of %s · %s per level\n",
		label, where, tgt.target.Model, o.workload, sizesText(base), len(loads), axis, windowText(o.load.duration, o.load.requests, o.voice.calls, o.workload))
	if axis == "rate" {
		fmt.Fprintln(out, "levels are the target rate; offered is the rate the seeded schedule drew, which saturation is judged against; n is the requests measured (* under 20: p95 is their maximum)")
	}
	width := outputWidth(out)
	report.LevelHeader(out, sw, width)
	writeErr := error(nil)
	sw.StartedAt = time.Now().UTC()
	levels := plan.series.Levels(live, axis, o.target.levelConfig(tgt))
	sweepOpts := bench.SweepOptions{
		Loads: loads, StopOnSaturation: o.stopSat, Sweep: sw,
		Level: func(i int, load float64) (*bench.Level, error) {
			lv, err := levels(i, load)
			if err != nil {
				return nil, seriesErr(err)
			}
			return lv, nil
		},
		OnLevel: func(s *results.Sweep, l results.Level) {
			progress.Done()
			report.LevelRow(out, s, l, width)
			if err := writeSweepData(s, paths.json, paths.csv); err != nil {
				writeErr = err
			}
			o.dash.sweep(s)
		},
	}
	if records != nil {
		sweepOpts.Records = records
	}
	sw = bench.Sweep(ctx, live, sweepOpts)
	progress.Done()
	o.dash.sweep(sw)
	fmt.Fprintln(out)
	report.LevelWarnings(out, sw)
	report.Knees(out, sw)
	if err := writeSweepData(sw, paths.json, paths.csv); err != nil {
		return withCode(ExitRuntime, err)
	}
	if writeErr != nil {
		return withCode(ExitRuntime, writeErr)
	}
	var png bytes.Buffer
	if err := report.SweepPlot(&png, sw); err != nil {
		fmt.Fprintf(errOut, "knee: the plot could not be drawn: %v\n", err)
	} else if err := results.WriteOutput(paths.png, png.Bytes()); err != nil {
		return withCode(ExitRuntime, err)
	}
	fmt.Fprintf(out, "wrote %s, %s and %s\n", paths.json, paths.csv, paths.png)
	if records != nil {
		if err := records.Close(); err != nil {
			return withCode(ExitRuntime, err)
		}
	}
	if sw.EveryRequestFailed() {
		return &exitError{ExitFailed, errors.New("every request of every level failed")}
	}
	return nil
}

// makeOutDir makes --out-dir before anything is measured, so a folder
// that cannot be made fails the sweep at once, not after its last level.
func (o *sweepFlags) makeOutDir() error {
	if o.outDir == "" || o.outDir == results.Stdout {
		return usageErr("--out-dir is the folder the result files go in; %q is not one", o.outDir)
	}
	if st, err := os.Stat(o.outDir); err == nil && !st.IsDir() {
		return withCode(ExitRuntime, fmt.Errorf("--out-dir %s is a file, not a folder", o.outDir))
	}
	if err := os.MkdirAll(o.outDir, 0o755); err != nil {
		return withCode(ExitRuntime, fmt.Errorf("--out-dir: %w", err))
	}
	return nil
}

// traceLevels are a trace sweep's levels as mean rates: --rates as given,
// or --trace-speedups (default 0.5,1,2,4) times the trace's own rate.
func (o *sweepFlags) traceLevels(c *cobra.Command, axis string, loads []float64, rate float64) ([]float64, error) {
	if axis != "rate" {
		return nil, usageErr("a trace's timestamps are its arrivals: sweep it with --trace-speedups or --rates, not --concurrency")
	}
	if o.rates != "" {
		if o.speedups != "" {
			return nil, usageErr("give --rates or --trace-speedups, not both")
		}
		return loads, nil
	}
	list := o.speedups
	if list == "" {
		list = "0.5,1,2,4"
	}
	sp, err := parseList(list)
	if err != nil {
		return nil, usageErr("--trace-speedups: %v", err)
	}
	out := make([]float64, len(sp))
	for i, s := range sp {
		out[i] = s * rate
	}
	return out, nil
}

func windowText(d time.Duration, requests, calls int, workload string) string {
	switch {
	case d > 0:
		return d.String()
	case requests == 0 && workload == "requests":
		return "the whole trace"
	case workload == "voice":
		return fmt.Sprintf("%d calls", calls)
	}
	return fmt.Sprintf("%d requests", requests)
}

// writeSweepData writes the JSON and CSV files atomically.
func writeSweepData(s *results.Sweep, jsonPath, csvPath string) error {
	if err := results.WriteJSON(jsonPath, s); err != nil {
		return fmt.Errorf("writing %s: %w", jsonPath, err)
	}
	if csvPath == "" {
		return nil
	}
	b, err := s.CSV()
	if err != nil {
		return err
	}
	if err := results.WriteOutput(csvPath, b); err != nil {
		return fmt.Errorf("writing %s: %w", csvPath, err)
	}
	return nil
}

// sizesText states the prompt and output sizes of a sweep.
func sizesText(c results.Config) string {
	switch {
	case c.Voice != nil:
		return fmt.Sprintf("%d-token system prompt, %d-token user turns, %d output tokens, %d turns", c.Voice.SystemPromptTokens, c.Voice.UserTokens, c.Voice.OutputTokens, c.Voice.Turns)
	case c.Dataset != "":
		return fmt.Sprintf("prompts from %s, max_tokens %d unless an entry says", c.Dataset, c.MaxTokens)
	case c.InputTokens > 0:
		return fmt.Sprintf("%d-token prompts, max_tokens %d", c.InputTokens, c.MaxTokens)
	}
	return fmt.Sprintf("a fixed prompt, max_tokens %d", c.MaxTokens)
}

// sweepPaths are the files a sweep or a prediction writes.
type sweepPaths struct{ json, csv, png string }

// sweepOutputs names a sweep's (or a prediction's) files in --out-dir:
// --label, or kind and the time; a label is a file name, never a path. It
// makes the folder and checks the files against the inputs and the other
// outputs given.
func (o *sweepFlags) sweepOutputs(kind string, others map[string]string) (string, sweepPaths, error) {
	label := o.label
	if label == "" {
		label = kind + "-" + time.Now().Format("20060102-150405")
	}
	if strings.ContainsAny(label, `/\`) {
		return "", sweepPaths{}, usageErr("--label must not contain a path separator")
	}
	p := sweepPaths{filepath.Join(o.outDir, label+".json"), filepath.Join(o.outDir, label+".csv"), filepath.Join(o.outDir, label+".png")}
	if err := o.makeOutDir(); err != nil {
		return "", sweepPaths{}, err
	}
	outputs := map[string]string{"--out-dir (JSON)": p.json, "--out-dir (CSV)": p.csv, "--out-dir (PNG)": p.png}
	for flag, path := range others {
		outputs[flag] = path
	}
	return label, p, checkIO(outputs, o.load.inputs())
}
