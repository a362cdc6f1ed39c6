package cmd

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
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
	sim         simFlags
	server      serverFlags
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
	// repeat is how many times every level is measured (--repeat).
	repeat int
}

// sweepOptions are knee sweep's: the shared flags, the shard of a split
// load, and what an unhealthy level does to the knees.
type sweepOptions struct {
	sweepFlags
	shard        shardFlags
	healthPolicy string
	sinks        sinkFlags
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
and .png, and the levels' time slices to <label>-slices.csv, rewritten after
every level so an interrupted sweep keeps what it measured.

With no target, knee starts its built-in simulator and sweeps it with
2,048-token prompts at 1–16 requests per second.`,
		Example: `  knee sweep
  knee sweep --base-url http://gpu:8000/v1 --rates 1,2,4,8,16 --duration 60s --label h100
  knee sweep --workload voice --sweep-preset l40s --base-url http://l40s:30000/v1 --label L40S`,
		Args: goodputArgs(&o.load),
		RunE: runtimeErrors(o.run),
	}
	o.register(c, 15*time.Second, "1m for calls")
	o.shard.register(c, true)
	o.sinks.register(c)
	c.Flags().StringVar(&o.healthPolicy, "health-policy", results.HealthExclude, "what a level whose client was unhealthy (client-limited, or host-starved: the whole machine stalled) does to the knees: exclude it, warn (judge it, and say so) or ignore (judge it)")
	withLoadFile(c, &o.load)
	return c
}

// register declares the flags knee sweep and knee predict share, with the
// command's default window per level and why it is that.
func (o *sweepFlags) register(c *cobra.Command, step time.Duration, why string) {
	o.target.register(c)
	o.load.registerShared(c)
	o.sim.register(c)
	o.server.register(c)
	fs := c.Flags()
	o.load.registerWorkload(c, "requests, voice, or conversations (a --dataset's conversations replayed as calls)")
	fs.StringVar(&o.rates, "rates", "", "open-loop levels: arrivals (or calls) per second, e.g. 1,2,4,8")
	fs.StringVar(&o.concurrency, "concurrency", "", "closed-loop levels: streams, e.g. 1,4,16,64")
	fs.DurationVar(&o.step, "duration", step, "measured window of each level (0 with --requests to count requests instead; "+why+")")
	aliasFlags(c, map[string]string{"step-duration": "duration", "preset": "sweep-preset"})
	fs.StringVar(&o.label, "label", "", "name of the result files (default sweep-<date>-<time>, -2 on when that is taken)")
	fs.StringVar(&o.outDir, "out-dir", "results", "folder of the result files")
	o.slo.register(c, "ttft_sched.p95:300", "what a level", true)
	// A sweep's own prompts (defaults): said where the flags are.
	fs.Lookup("input-tokens").Usage += fmt.Sprintf(" (a sweep of requests sends %d unless --prompt or --dataset is given)", defaultSweepInput)
	mt := fs.Lookup("max-tokens")
	mt.Usage += fmt.Sprintf(" (%d with a sweep's default prompts, else %s)", defaultSweepOutput, mt.DefValue)
	mt.DefValue = "0" // said above
	fs.Lookup("prompt").Usage = "one fixed prompt for every request, instead of a sweep's synthetic ones"
	fs.BoolVar(&o.stopSat, "stop-on-saturation", false, "end the sweep once two levels in a row miss the SLO")
	fs.StringVar(&o.load.Vary, "vary", "", "with --mix of class rates: the class whose rate the levels (--rates) are, the others keeping theirs; reports how each other class's tail moves with it (the interference row)")
	fs.StringVar(&o.preset, "sweep-preset", "", "seed the rates and SLO from a sweep preset (see knee presets)")
	fs.StringVar(&o.records, "records", "", "stream one JSON line per request of every level to this file (each with its level)")
	markOutputs(c, "out-dir", "records")
	fs.StringVar(&o.speedups, "trace-speedups", "", "a trace's levels as multiples of its own speed, e.g. 0.5,1,2,4 (default; --rates instead asks for mean rates)")
	fs.IntVar(&o.repeat, "repeat", 1, "measure every level this many times, each from its own seed and prompts and interleaved (every level once, then again), and report the pooled figures with 95% intervals across the repeats and the range of each knee")
	c.MarkFlagsMutuallyExclusive("rates", "concurrency")
}

// maxRepeat bounds --repeat: past it, a longer window measures better.
const maxRepeat = 100

// checkRepeat refuses a --repeat knee cannot honour.
func (o *sweepFlags) checkRepeat() error {
	switch {
	case o.repeat < 1 || o.repeat > maxRepeat:
		return usageErr("--repeat must be 1–%d, got %d", maxRepeat, o.repeat)
	}
	return nil
}

// defaults are the levels when neither --rates nor --concurrency is
// given: a sweep preset's, or the default sweep's. A sweep preset also
// chooses the SLO and, against the built-in simulator, what it serves,
// levels given or not. A sweep of
// requests that names no prompts sends the default sweep's 2,048-token
// ones, levels given or not.
func (o *sweepFlags) defaults(c *cobra.Command) ([]float64, error) {
	fs := c.Flags()
	if o.load.Workload == "requests" && o.preset == "" && !fs.Changed("input-tokens") && !fs.Changed("dataset") && !fs.Changed("prompt") {
		// The default sweep's prompts whether or not the levels are
		// given: choosing the rates never changes what is sent.
		o.load.InputTokens = defaultSweepInput
		if !fs.Changed("max-tokens") {
			o.load.MaxTokens = defaultSweepOutput
		}
	}
	var rates []float64
	if o.preset != "" {
		// Checked and applied whether or not the levels are given: a
		// preset that named nothing would otherwise pass unseen.
		p, ok := presets.SweepNamed(o.preset)
		if !ok {
			return nil, usageErr("unknown sweep preset %q (see knee presets)", o.preset)
		}
		if !fs.Changed("slo") {
			o.slo.spec = num(p.SLOMillis)
		}
		// Against the built-in simulator, a preset also chooses what it
		// serves (unless --sim-models does), so the sweep shows where such
		// a box would bend.
		if o.target.BaseURL == "" && o.sim.preset == "" && !fs.Changed("sim-models") {
			o.sim.preset = p.Hardware + "/" + p.Model
		}
		rates = p.Rates
	}
	if o.rates != "" || o.concurrency != "" {
		return nil, nil
	}
	if rates != nil {
		return rates, nil
	}
	if o.load.Workload != "requests" {
		return nil, nil
	}
	return defaultSweepRates, nil
}

// sweepSetup is a sweep's levels, ready to run live or in virtual time.
type sweepSetup struct {
	axis  string
	loads []float64
	plan  *bench.Prepared
	slo   results.SLO
}

// setup checks the shared flags and builds the levels. callStep, when set,
// is the window of a level of calls when --duration is not given.
func (o *sweepFlags) setup(c *cobra.Command, callStep time.Duration) (*sweepSetup, error) {
	if err := bench.CheckWorkload(o.load.Workload); err != nil {
		return nil, usageErr("%w", err)
	}
	if err := o.checkRepeat(); err != nil {
		return nil, err
	}
	defaults, err := o.defaults(c)
	if err != nil {
		return nil, err
	}
	w := bench.SweepSpec{Rates: o.rates, Concurrency: o.concurrency, Speedups: o.speedups, Defaults: defaults, Step: o.step, CallStep: callStep}
	axis, loads, err := w.Levels(&o.load.Spec)
	if err != nil {
		return nil, usageErr("%w", err)
	}
	slo, err := o.slo.parse(c, o.load.Goodput)
	if err != nil {
		return nil, err
	}
	o.load.Endpoint = o.target.Endpoint
	o.load.serverHistory(o.target.TargetSpec)
	// A prediction reads an image's size and identity, never its pixels.
	o.load.VirtualImages = c.Name() == "predict"
	plan, loads, err := w.Prepare(c.Context(), &o.load.Spec, axis, loads, bench.Nonce(c.Context()))
	if err != nil {
		return nil, usageErr("%w", err)
	}
	if err := o.target.validate(c); err != nil {
		return nil, err
	}
	return &sweepSetup{axis: axis, loads: loads, plan: plan, slo: slo}, nil
}

// sweepOutputs names a sweep's (or a prediction's) files in --out-dir
// (report.NewSweepFiles), and checks them against the inputs and the
// other outputs given.
func (o *sweepFlags) sweepOutputs(kind string, others map[string]string) (string, report.SweepFiles, error) {
	label, files, err := report.NewSweepFiles(o.outDir, o.label, kind)
	switch {
	case errors.As(err, new(*report.UsageError)):
		return "", files, usageErr("%w", err)
	case err != nil:
		return "", files, withCode(ExitRuntime, err)
	}
	if kind == "sweep" && o.load.Slice > 0 {
		files = files.WithSlices()
	}
	outputs := files.Outputs()
	maps.Copy(outputs, others)
	return label, files, checkIO(outputs, o.load.Inputs())
}

// levelsText is "1 level" or "N levels".
func levelsText(n int) string {
	if n == 1 {
		return "1 level"
	}
	return strconv.Itoa(n) + " levels"
}
