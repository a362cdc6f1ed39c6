package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/kneebench/knee/bench"
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
		Example: `  knee predict --sim-preset h100-80gb/llama-3.1-8b --rates 2,4,8,16,32 --step-duration 10m --label h100-8b
  knee predict --sim-preset a100-80gbx4/llama-3.1-70b --concurrency 1,8,32,128 --step-duration 5m`,
		Args: goodputArgs(&o.load),
		RunE: runtimeErrors(o.run),
	}
	// Virtual time is cheap, and a queue needs minutes to show.
	o.register(c, 2*time.Minute, "virtual time is cheap")
	c.Flags().IntVar(&o.parallel, "parallel", 0, "levels predicted at once (default: one per CPU)")
	c.Flags().IntVar(&o.replicas, "replicas", 1, "serve every level from this many independent replicas of the model behind a router")
	c.Flags().StringVar(&o.routing, "routing", "round-robin", "the router's policy with --replicas: round-robin, random, least-loaded or prefix-affinity")
	return c
}

// predictTarget builds the simulated server from the --sim flags.
func (o *predictOptions) predictTarget() (predict.Target, string, error) {
	return simTarget(&o.sim, o.target.model, o.target.endpoint == "chat")
}

// simTarget builds the simulated server of the --sim flags: its models
// file, the model (the file's first when empty) and its responses. It
// returns what the models came from.
func simTarget(sim *simFlags, model string, chat bool) (predict.Target, string, error) {
	var models *simulator.ModelsFile
	var err error
	origin := sim.models
	if sim.preset != "" {
		models, err = simulator.PresetModels(sim.preset)
		origin = sim.preset
		if err != nil {
			return predict.Target{}, "", usageErr("--sim-preset: %v", err)
		}
	} else if models, err = simulator.LoadModels(sim.models); err != nil {
		return predict.Target{}, "", err
	}
	responder, err := simulator.LoadResponses(sim.responses)
	if err != nil {
		return predict.Target{}, "", err
	}
	t := predict.Target{Models: models, Model: model, Responder: responder, Chat: chat}
	if t.Model == "" {
		t.Model = models.Models[0].Name
	}
	if _, _, err := t.Config(); err != nil {
		return predict.Target{}, "", usageErr("%v", err)
	}
	return t, origin, nil
}

// run is knee sweep's run in virtual time.
func (o *predictOptions) run(c *cobra.Command, _ []string) error {
	st, err := o.setup(c, 0)
	if err != nil {
		return err
	}
	axis, loads, plan := st.axis, st.loads, st.plan
	if o.target.baseURL != "" {
		return usageErr("knee predict sends nothing: drop --base-url, and choose what to simulate with --sim-preset or --sim-models")
	}
	if o.parallel < 0 {
		return usageErr("--parallel must not be negative")
	}
	routing, err := predict.ParseRouting(o.routing)
	if err != nil || o.replicas < 1 {
		return usageErr("--replicas must be at least 1 and --routing one of round-robin, random, least-loaded, prefix-affinity")
	}
	if err := o.predictBounds(c, axis, loads, plan); err != nil {
		return err
	}
	target, origin, err := o.predictTarget()
	if err != nil {
		return err
	}
	label, paths, err := o.sweepOutputs("predict", map[string]string{"--records": o.records})
	if err != nil {
		return err
	}
	if results.IsStdout(o.records) {
		return usageErr("a prediction prints its rows on standard output: give --records a file")
	}
	if !nonceFixed(c.Context()) {
		// The same flags predict the same files, byte for byte: the
		// prompts' nonce is the seed's, not drawn (a prediction warms no
		// server that a later one would be flattered by).
		plan.series.Nonce = fmt.Sprintf("seed-%d", o.load.seed)
	}
	yml, err := target.Models.YAML(origin)
	if err != nil {
		return err
	}
	base := o.target.config(predictBaseURL, target.Model)
	base.Predicted = true
	plan.series.Describe(&base, axis)
	sw := &results.Sweep{Label: label, Config: base, Environment: environment(), Axis: axis, Workload: o.workload,
		SLO: st.slo, Prediction: &results.Prediction{Model: target.Model, Preset: o.sim.preset, ModelsYAML: string(yml)}}
	if o.replicas > 1 {
		sw.Prediction.Replicas, sw.Prediction.Routing = o.replicas, string(routing)
	}
	if err := plan.series.Size(target); err != nil {
		return seriesErr(err)
	}
	// A dataset's levels continue one after another through its entries
	// (or conversations), as a live sweep's do, so they are predicted in
	// order.
	if plan.series.Workload.Dataset != nil {
		o.parallel = 1
	}
	out := c.OutOrStdout()
	served := origin
	if o.replicas > 1 {
		served = fmt.Sprintf("%d replicas of %s behind a %s router", o.replicas, origin, routing)
	}
	fmt.Fprintf(out, "predicted sweep %s · %s in virtual time · model %s · %s · %d levels of %s · %s per level\n",
		label, served, target.Model, sizesText(base), len(loads), axis, windowText(plan.lf.duration, plan.load.Requests, plan.vf.calls, o.workload))
	if o.sim.preset != "" {
		if kv, err := simulator.PresetKV(o.sim.preset); err == nil {
			fmt.Fprintf(out, "%s: %s\n", o.sim.preset, kv)
		}
	}
	fit := target.FitNote()
	if fit != "" {
		sw.Prediction.Fit = fit
		fmt.Fprintln(out, fit)
	}
	started := time.Now()
	virtual := &predict.Virtual{Target: target, Replicas: o.replicas, Routing: routing}
	if fit != "" {
		virtual.Notes = []string{fit}
	}
	parallel := o.parallel
	if parallel == 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	// Levels run side by side; their records go to --records in level
	// order, once every level is done.
	var records bytes.Buffer
	sweepOpts := bench.SweepOptions{Loads: loads, Parallel: parallel, StopOnSaturation: o.stopSat, Sweep: sw,
		Level: plan.series.Levels(target, axis, base)}
	if o.records != "" {
		sweepOpts.Records = &records
	}
	sw = bench.Sweep(c.Context(), virtual, sweepOpts)
	report.SweepTable(out, sw, outputWidth(out))
	if kv := kvCapacity(target, sw); kv != "" {
		fmt.Fprintln(out, kv)
	}
	if sw.Interrupted {
		fmt.Fprintf(out, "stopped: the %d levels predicted so far are written; a level cut short is marked interrupted and left out of the knees\n", len(sw.Levels))
	}
	if o.records != "" {
		if err := results.WriteOutput(o.records, records.Bytes()); err != nil {
			return withCode(ExitRuntime, fmt.Errorf("--records %s: %w", o.records, err))
		}
	}
	if err := writeSweepData(sw, paths.json, paths.csv); err != nil {
		return withCode(ExitRuntime, err)
	}
	var png bytes.Buffer
	if err := report.SweepPlot(&png, sw); err != nil {
		fmt.Fprintf(c.ErrOrStderr(), "knee: the plot could not be drawn: %v\n", err)
	} else if err := results.WriteOutput(paths.png, png.Bytes()); err != nil {
		return withCode(ExitRuntime, err)
	}
	fmt.Fprintf(out, "predicted in %s; wrote %s, %s and %s\n", time.Since(started).Round(time.Millisecond), paths.json, paths.csv, paths.png)
	if o.records != "" {
		fmt.Fprintf(out, "wrote %s (simulated time: every level starts at the Unix epoch)\n", o.records)
	}
	if sw.EveryRequestFailed() {
		return &exitError{ExitFailed, errors.New("every request of every level failed")}
	}
	return nil
}

// kvCapacity says how many sequences of the predicted workload's mean size
// (prompt and answer, as the first level counted them) the KV cache of one
// replica holds: where a knee sits when the cache, not compute, runs out.
// It records the cache in the sweep's prediction as well.
func kvCapacity(t predict.Target, sw *results.Sweep) string {
	blocks, size, err := t.KVCapacity()
	if err != nil || sw.Prediction == nil {
		return ""
	}
	sw.Prediction.KVBlocks, sw.Prediction.KVBlockTokens = blocks, size
	for _, l := range sw.Levels {
		r := l.Run
		if r == nil || r.Tokens.Input.Count == 0 {
			continue
		}
		seq := r.Tokens.Input.Mean + r.Tokens.Output.Mean
		n := predict.SequencesHeld(blocks, size, seq)
		sw.Prediction.KVSequences, sw.Prediction.KVSequenceTokens = n, seq
		return fmt.Sprintf("KV cache (one replica): %s blocks of %d tokens (%s tokens) hold %s sequences of the workload's mean %.0f tokens (prompt %.0f + answer %.0f)",
			thousands(blocks), size, thousands(blocks*size), thousands(n), seq, r.Tokens.Input.Mean, r.Tokens.Output.Mean)
	}
	return ""
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Bounds on one predicted level, checked before any runs: a level's
// requests are kept in memory as they finish (about 1.5 KB each), so a
// level far past these would end in running out of it.
const (
	maxPredictedRequests = 500_000
	maxPredictedReplicas = 1024
	maxPredictedStreams  = 100_000
	maxPredictedWindow   = 24 * time.Hour
)

// predictBounds refuses a prediction whose levels cannot fit, and flags
// that mean nothing in virtual time.
func (o *predictOptions) predictBounds(c *cobra.Command, axis string, loads []float64, plan *levelPlan) error {
	fs := c.Flags()
	for _, name := range []string{"timeout", "request-timeout", "retries", "idle-conn-timeout", "header", "api-key", "extra-body"} {
		if fs.Changed(name) {
			return usageErr("--%s has no meaning in virtual time, where knee predict sends nothing; leave it out", name)
		}
	}
	if fs.Changed("tokenizer") && o.load.dataset == "" {
		return usageErr("--tokenizer sizes a --dataset; without one knee predict has nothing to count")
	}
	if o.replicas > maxPredictedReplicas {
		return usageErr("--replicas %d: at most %d replicas are predicted", o.replicas, maxPredictedReplicas)
	}
	if plan.lf.duration > maxPredictedWindow {
		return usageErr("--step-duration %s: at most %s of virtual time a level", plan.lf.duration, maxPredictedWindow)
	}
	for _, load := range loads {
		if axis == "concurrency" && load > maxPredictedStreams {
			return usageErr("--concurrency %g: at most %d streams are predicted", load, maxPredictedStreams)
		}
		n := float64(plan.load.Requests)
		if n == 0 && axis == "rate" {
			n = load * plan.lf.duration.Seconds()
		}
		if plan.calls {
			n *= float64(max(plan.vf.turns, 1))
		}
		if n > maxPredictedRequests {
			return usageErr("a level of %g would predict about %.0f requests, past the %d a level holds in memory: shorten --step-duration, or give --requests", load, n, maxPredictedRequests)
		}
	}
	return nil
}
