package cmd

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator"
	"github.com/spf13/cobra"
)

// predictBaseURL stands for the target of a predicted sweep in its files.
const predictBaseURL = "virtual://knee-predict"

// predictOptions are knee predict's: the shared flags, and the fleet and
// parallelism of the prediction.
type predictOptions struct {
	sweepFlags
	parallel int
	replicas int
	routing  string
}

func newPredictCmd() *cobra.Command {
	o := &predictOptions{}
	c := &cobra.Command{
		Use:   "predict",
		Short: "Predict a sweep in virtual time on the simulator's scheduler core",
		Long: `predict takes knee sweep's flags and runs every level on the simulator's
scheduler core in virtual time: the same seeded arrivals, prompts and answers
a live sweep of knee sim would produce, with no sockets and no sleeping, and
levels in parallel across cores. It writes the same JSON, CSV and PNG files,
marked as predicted and carrying the models file whose numbers shaped the
timing, with the same knees. Compare it with a measured sweep:
knee compare measured.json predicted.json.

What it simulates is --sim-preset (GPU[xN]/MODEL[@DTYPE], see knee presets)
or --sim-models; the model must use the scheduler engine. The voice workload
is predicted with its prefix cache: turns carry the same histories, so the
cache-hit rate is the one a live sweep of knee sim measures.`,
		Example: `  knee predict --sim-preset h100-80gb/llama-3.1-8b --rates 2,4,8,16,32 --duration 10m --label h100-8b
  knee predict --sim-preset a100-80gbx4/llama-3.1-70b --concurrency 1,8,32,128 --duration 5m`,
		Args: goodputArgs(&o.load),
		RunE: runtimeErrors(o.run),
	}
	// Virtual time is cheap, and a queue needs minutes to show.
	o.register(c, 2*time.Minute, "virtual time is cheap")
	c.Flags().IntVar(&o.parallel, "parallel", 0, "levels predicted at once (default: one per CPU)")
	c.Flags().IntVar(&o.replicas, "replicas", 1, "serve every level from this many independent replicas of the model behind a router")
	c.Flags().StringVar(&o.routing, "routing", "round-robin", "the router's policy with --replicas: round-robin, random, least-loaded, prefix-affinity or adapter-affinity")
	c.Flags().BoolVar(&o.sim.gemmTiles, "gemm-tiles", false, "slow the --sim-preset's matrix products in small steps and narrow tensor-parallel slices by its GPU's fitted kernel table (hopper, blackwell: knee presets; docs/fidelity.md)")
	hideFlags(c, append(liveOnly, "extra-body", "export"))
	withLoadFile(c, &o.load)
	return c
}

// predictTarget builds the simulated server from the --sim flags, with
// what every request asks of it: the thinking (--reasoning-effort,
// --chat-template-kwarg enable_thinking) and the tools.
func (o *predictOptions) predictTarget(ctx context.Context) (predict.Target, string, error) {
	t, origin, err := simTarget(ctx, &o.sim, o.target.Model, o.target.Endpoint)
	if err != nil {
		return t, origin, err
	}
	if err := shapeRequests(ctx, &t, &o.target.TargetSpec); err != nil {
		return t, origin, err
	}
	if o.load.ImageCount > 0 {
		for _, m := range t.Models.Models {
			if m.Name == t.Model && m.Vision == nil {
				return t, origin, usageErr("--image-count: model %s takes no images: give it vision: in --sim-models", m.Name)
			}
		}
	}
	return t, origin, nil
}

// shapeRequests gives a simulated target what the target flags ask of
// every request. Of the template's arguments only enable_thinking
// changes what the simulator does; any other is refused rather than
// predicted as if it were sent.
func shapeRequests(ctx context.Context, t *predict.Target, spec *bench.TargetSpec) error {
	t.Effort = spec.ReasoningEffort
	for _, kv := range spec.TemplateKwargs {
		k, v, _ := strings.Cut(kv, "=")
		if strings.TrimSpace(k) != "enable_thinking" {
			return usageErr("--chat-template-kwarg %s: knee predict knows only enable_thinking (the simulator's template reads nothing else)", kv)
		}
		t.NoThinking = strings.TrimSpace(v) == "false"
	}
	if spec.ToolList == nil && spec.Tools != "" {
		if err := usage(spec.ReadTools(ctx)); err != nil {
			return err
		}
	}
	tools := spec.ToolList
	t.ToolList = tools
	t.ToolChoice = spec.ToolChoice
	t.ToolRounds, t.ToolResult = spec.ToolRounds, spec.ToolResult
	return nil
}

// simTarget builds the simulated server of the --sim flags: its models
// file, the model (the file's first when empty) and its responses. It
// returns what the models came from.
func simTarget(ctx context.Context, sim *simFlags, model string, ep transport.Endpoint) (predict.Target, string, error) {
	t, origin, err := predict.TargetSpec{Preset: sim.preset, Models: sim.models, Responses: sim.responses, Model: model,
		Endpoint: ep, GEMMTiles: sim.gemmTiles}.Load(ctx)
	if errors.As(err, new(*simulator.UsageError)) {
		return t, origin, usageErr("%w", err)
	}
	if err != nil {
		return t, origin, withCode(ExitRuntime, err)
	}
	return t, origin, err
}

// prediction is a predicted sweep ready to run.
type prediction struct {
	*sweepSetup
	routing predict.Routing
	target  predict.Target
	origin  string
	label   string
	files   report.SweepFiles
}

// prepare checks every flag, builds the simulated target and names every
// file before anything is predicted.
func (o *predictOptions) prepare(c *cobra.Command) (*prediction, error) {
	st, err := o.setup(c, 0)
	if err != nil {
		return nil, err
	}
	if o.target.BaseURL != "" {
		return nil, usageErr("knee predict sends nothing: drop --base-url, and choose what to simulate with --sim-preset or --sim-models")
	}
	if o.parallel < 0 {
		return nil, usageErr("--parallel must not be negative")
	}
	p := &prediction{sweepSetup: st}
	if p.routing, err = predict.ParseRouting(o.routing); err != nil || o.replicas < 1 {
		return nil, usageErr("--replicas must be at least 1 and --routing one of round-robin, random, least-loaded, prefix-affinity, adapter-affinity")
	}
	if err := o.predictBounds(c, st); err != nil {
		return nil, err
	}
	if p.target, p.origin, err = o.predictTarget(c.Context()); err != nil {
		return nil, err
	}
	if results.IsStdout(o.records) {
		return nil, usageErr("a prediction prints its rows on standard output: give --records a file")
	}
	if p.label, p.files, err = o.sweepOutputs("predict", map[string]string{"--records": o.records}); err != nil {
		return nil, err
	}
	if !bench.NonceFixed(c.Context()) {
		// The same flags predict the same files, byte for byte: the
		// prompts' nonce is the seed's, not drawn (a prediction warms no
		// server that a later one would be flattered by).
		st.plan.Series.Nonce = fmt.Sprintf("seed-%d", o.load.Seed)
	}
	if err := st.plan.Series.Size(p.target); err != nil {
		return nil, seriesErr(err)
	}
	l := predict.LevelsSpec{Axis: st.axis, Loads: st.loads, Requests: st.plan.Load.Requests, Window: o.load.Duration, Replicas: o.replicas,
		Tokens: st.plan.Series.MeanSize(), Parallel: o.levelsAtOnce(st)}
	if st.plan.Calls {
		l.Turns = max(o.load.Voice.Turns, 1)
	}
	return p, usage(l.Check())
}

// levelsAtOnce is how many levels are predicted side by side: one per
// CPU, but a dataset's, which continue one after another through its
// entries (or conversations), as a live sweep's do.
func (o *predictOptions) levelsAtOnce(st *sweepSetup) int {
	if st.plan.Series.Workload.Dataset != nil {
		return 1
	}
	return cmp.Or(o.parallel, runtime.GOMAXPROCS(0))
}

// run is knee sweep's run in virtual time.
func (o *predictOptions) run(c *cobra.Command, _ []string) error {
	p, err := o.prepare(c)
	if err != nil {
		return err
	}
	sw, base, err := o.header(c, p)
	if err != nil {
		return err
	}
	started := time.Now()
	virtual := &predict.Virtual{Target: p.target, Replicas: o.replicas, Routing: p.routing}
	if sw.Prediction.Fit != "" {
		virtual.Notes = []string{sw.Prediction.Fit}
	}
	// Levels run side by side (levelsAtOnce). Their records go to
	// --records in level order, once every level is done.
	parallel := o.levelsAtOnce(p.sweepSetup)
	var records bytes.Buffer
	opts := bench.SweepOptions{Loads: p.loads, Parallel: parallel, StopOnSaturation: o.stopSat, Sweep: sw,
		Level: p.plan.Series.Levels(p.target, p.axis, base), Repeat: o.repeat, RepeatLevel: repeatLevels(p.plan.Series, p.target, p.axis, base)}
	if o.records != "" {
		opts.Records = &records
	}
	unit := map[string]string{"rate": "/s", "concurrency": " streams"}[p.axis]
	ticker, onLevel := report.NewPredictTicker(len(p.loads), unit, started), opts.OnLevel
	opts.OnLevel = func(s *results.Sweep, l results.Level) {
		ticker.Level(s, l)
		if onLevel != nil {
			onLevel(s, l)
		}
	}
	stop := ticker.Show(c.ErrOrStderr())
	sw = bench.Sweep(c.Context(), virtual, opts)
	stop()
	out := c.OutOrStdout()
	report.SweepTable(out, sw, report.Width(out))
	if kv := predict.KVNote(p.target, sw); kv != "" {
		report.Wrap(out, 9, kv+"\n")
	}
	// A preset's header said it already.
	if start := predict.StartNote(p.target); start != "" && o.sim.preset == "" {
		report.Wrap(out, 9, start+"\n")
	}
	if sw.Interrupted {
		fmt.Fprintf(out, "stopped: the %d levels predicted so far are written; a level cut short is marked interrupted and left out of the knees\n", len(sw.Levels))
	}
	if o.records != "" {
		if err := results.WriteOutput(o.records, records.Bytes()); err != nil {
			return withCode(ExitRuntime, fmt.Errorf("--records %s: %w", o.records, err))
		}
	}
	if err := writeSweep(c, sw, p.files, fmt.Sprintf("predicted in %s; wrote", time.Since(started).Round(time.Millisecond))); err != nil {
		return err
	}
	if o.records != "" {
		fmt.Fprintf(out, "wrote %s (simulated time: every level starts at the Unix epoch)\n", o.records)
	}
	if sw.EveryRequestFailed() {
		return &exitError{ExitFailed, errors.New("every request of every level failed")}
	}
	return nil
}

// header prints what the prediction is and returns the sweep, empty of
// levels, and the configuration every level adds its own to.
func (o *predictOptions) header(c *cobra.Command, p *prediction) (*results.Sweep, results.Config, error) {
	pred, err := p.target.Prediction(p.origin, o.sim.preset, o.replicas, p.routing)
	if err != nil {
		return nil, results.Config{}, err
	}
	base := o.target.config(predictBaseURL, p.target.Model)
	base.Predicted = true
	p.plan.Series.Describe(&base, p.axis)
	sw := &results.Sweep{Label: p.label, Config: base, Environment: environment(), Axis: p.axis, Workload: o.load.Workload, SLO: p.slo, Prediction: pred}
	served := p.origin
	if o.replicas > 1 {
		served = fmt.Sprintf("%d replicas of %s behind a %s router", o.replicas, p.origin, p.routing)
	}
	out := c.OutOrStdout()
	report.Wrapf(out, 6, "predicted sweep %s · %s in virtual time · model %s · %s · %s of %s · %s per level\n",
		p.label, served, p.target.Model, report.Sizes(base), levelsText(len(p.loads)), p.axis,
		report.Window(o.load.Duration, p.plan.Load.Requests, o.load.Voice.Calls, o.load.Workload))
	if o.sim.preset != "" {
		if kv, err := simulator.PresetKV(o.sim.preset); err == nil {
			report.Wrapf(out, 6, "%s: %s\n", o.sim.preset, kv)
		}
	}
	if sw.Prediction.Fit != "" {
		report.Wrap(out, 6, sw.Prediction.Fit+"\n")
	}
	report.Wrap(out, 6, sw.Prediction.Scheduling+"\n")
	return sw, base, nil
}

// predictBounds refuses flags that mean nothing in virtual time (the
// levels' bounds are predict.LevelsSpec's, checked once they are sized).
func (o *predictOptions) predictBounds(c *cobra.Command, st *sweepSetup) error {
	fs := c.Flags()
	for _, name := range []string{"timeout", "request-timeout", "retries", "idle-conn-timeout", "header", "api-key", "extra-body", "reset-cache", "profile", "export"} {
		if fs.Changed(name) {
			return usageErr("--%s has no meaning in virtual time, where knee predict sends nothing; leave it out", name)
		}
	}
	if fs.Changed("gpu-metrics-url") {
		return usageErr("--gpu-metrics-url has no meaning in virtual time: knee predict gives each level's predicted energy itself, from its GPU preset's power figures")
	}
	if fs.Changed("tokenizer") && o.load.Data.Path == "" {
		return usageErr("--tokenizer sizes a --dataset; without one knee predict has nothing to count")
	}
	return nil
}
