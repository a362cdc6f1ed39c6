package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// planOptions are knee plan's: a workload at a target load, the SLOs, and
// the configurations to search.
type planOptions struct {
	target     targetFlags
	load       loadFlags
	voice      voiceFlags
	sim        simFlags
	workload   string
	slo        sloFlags
	gpus       string
	models     string
	tps        string
	routing    string
	replicas   int
	prices     string
	calibrated string
	findMax    bool
	label      string
	outDir     string
	parallel   int
}

func newPlanCmd() *cobra.Command {
	o := &planOptions{}
	c := &cobra.Command{
		Use:   "plan",
		Short: "Find the cheapest GPUs that serve a load within its SLOs, in virtual time",
		Long: `plan answers the capacity question: how many of which GPUs serve this
workload at this load within these SLOs. For every GPU (--gpus), model and
format (--models), tensor-parallel size (--tp) and routing policy
(--routing) it predicts levels in virtual time on the simulator's scheduler
core (as knee predict does): one replica's capacity by bisection, then the
fewest replicas meeting every SLO at the target (--rate or --concurrency;
calls per second with --workload voice), their headroom (the largest load
they still meet, by bisection), their figures at the target, and their cost
per hour and per million output tokens. The table lists the configurations
that meet every SLO, cheapest first, then those that do not, with why.

An SLO is every --slo bound (METRIC_pNN:MS: ttft, ttft_sched, itl, tpot,
e2e, e2e_sched or queue_wait at p50, p90, p95 or p99), errors under
--max-error-rate, at most 2% of requests cut or unsent, no saturation, and,
with --goodput and goodput:PERCENT in --slo, that share of requests meeting every
goodput bound. Prices are per GPU-hour: --prices FILE (YAML or JSON,
GPU: dollars), or the example prices shipped with knee, which every cost
says it came from. --calibrated FILE plans on a fitted models file
(knee calibrate) instead of presets. --find-max-rate asks the inverse: the
largest load a fleet (--gpus GPUxN: N GPUs in all) holds, split into
replicas of each --tp.

Every prediction is exact in virtual time; what it stands on is the cost
model's fit (see knee presets, and docs/fidelity.md): measure the chosen
configuration before buying a fleet of it.`,
		Example: `  knee plan --rate 50 --input-tokens 1000 --max-tokens 200 --slo ttft_p95:500 --gpus h100-80gb,a100-80gb,l40s
  knee plan --rate 20 --models llama-3.1-70b,llama-3.1-70b@fp8 --gpus h100-80gb,h200 --slo ttft_p95:800,tpot_p50:50
  knee plan --gpus h100-80gbx8 --find-max-rate --input-tokens 512 --max-tokens 128 --slo ttft_p95:300`,
		Args: goodputArgs(&o.load),
		RunE: runtimeErrors(o.run),
	}
	o.register(c)
	return c
}

func (o *planOptions) register(c *cobra.Command) {
	o.target.register(c)
	fs := c.Flags()
	fs.Float64Var(&o.load.rate, "rate", 0, "the load to serve: arrivals per second (calls per second with --workload voice)")
	fs.IntVar(&o.load.concurrency, "concurrency", 0, "the load to serve: closed-loop streams")
	fs.DurationVar(&o.load.duration, "window", 10*time.Minute, "simulated window of every prediction")
	o.load.registerShared(c)
	o.voice.register(c, 4, "5s,7s")
	o.sim.register(c)
	fs.StringVar(&o.workload, "workload", "requests", "requests, voice, or conversations (a --dataset's conversations replayed as calls)")
	o.slo.register(c, "ttft_p95:500", "what every configuration", false)
	fs.StringVar(&o.gpus, "gpus", "h100-80gb", "GPU presets to consider, comma-separated (GPUxN fixes the tensor-parallel size, or with --find-max-rate the fleet's GPUs)")
	fs.StringVar(&o.models, "models", "llama-3.1-8b", "model presets to consider, MODEL[@DTYPE[,kv=DTYPE]], comma-separated")
	fs.StringVar(&o.tps, "tp", "auto", "tensor-parallel sizes to consider, comma-separated (auto: the smallest power of two the model fits and twice it; with --find-max-rate every power of two dividing the fleet)")
	fs.StringVar(&o.routing, "routing", "round-robin,least-loaded", "routing policies to consider for more than one replica: round-robin, random, least-loaded, prefix-affinity")
	fs.IntVar(&o.replicas, "max-replicas", 64, "the most replicas a configuration may have")
	fs.StringVar(&o.prices, "prices", "", "prices per GPU-hour, a YAML or JSON map of GPU name to dollars (default: knee's examples, marked as such)")
	fs.StringVar(&o.calibrated, "calibrated", "", "plan on this fitted models file (knee calibrate -o) instead of presets")
	fs.BoolVar(&o.findMax, "find-max-rate", false, "find the largest load each fleet of --gpus GPUxN holds, instead of the replicas for a target")
	fs.StringVar(&o.label, "label", "", "name of the result files (default plan-<date>-<time>)")
	fs.StringVar(&o.outDir, "out-dir", "results", "folder of the result files")
	fs.IntVar(&o.parallel, "parallel", 0, "configurations searched at once (default: one per CPU)")
	c.MarkFlagsMutuallyExclusive("rate", "concurrency")
	c.MarkFlagsMutuallyExclusive("calibrated", "gpus")
	c.MarkFlagsMutuallyExclusive("calibrated", "models")
	c.MarkFlagsMutuallyExclusive("calibrated", "tp")
}

func (o *planOptions) run(c *cobra.Command, _ []string) error {
	if err := checkWorkload(o.workload); err != nil {
		return err
	}
	fs := c.Flags()
	if o.target.baseURL != "" {
		return usageErr("knee plan sends nothing: drop --base-url (it predicts in virtual time)")
	}
	if fs.Changed("requests") {
		return usageErr("a plan's predictions are bounded by --window, not --requests")
	}
	axis, target := "rate", o.load.rate
	if o.load.concurrency > 0 {
		axis, target = "concurrency", float64(o.load.concurrency)
	}
	switch {
	case o.findMax && target > 0:
		return usageErr("--find-max-rate finds the load: give no --rate or --concurrency")
	case !o.findMax && !(target > 0):
		return usageErr("give the load to serve: --rate R (or --concurrency N), or --find-max-rate")
	case o.load.duration < time.Minute || o.load.duration > 24*time.Hour:
		return usageErr("--window must be between 1m and 24h (a queue needs minutes to show)")
	case o.replicas < 1 || o.replicas > 1024 || o.parallel < 0:
		return usageErr("--max-replicas must be 1 to 1024 and --parallel not negative")
	}
	slo, err := o.slo.parse(c, o.load.goodput)
	if err != nil {
		return err
	}
	var routings []predict.Routing
	for _, r := range strings.Split(o.routing, ",") {
		p, err := predict.ParseRouting(strings.TrimSpace(r))
		if err != nil {
			return usageErr("--routing: %v", err)
		}
		routings = append(routings, p)
	}
	if o.findMax && o.load.rate == 0 && o.load.concurrency == 0 {
		// The levels' rates are the search's; a placeholder for the flags'
		// checks.
		o.load.rate = 1
	}
	plan, err := buildLevelPlan(c, &o.load, &o.voice, o.workload)
	if err != nil {
		return err
	}
	if plan.load.Trace != nil {
		return usageErr("a trace's timestamps are its load: plan for it with --rate (its mean rate), not yet supported for traces")
	}
	if err := plan.checkCompletions(o.target.endpoint); err != nil {
		return err
	}
	if !nonceFixed(c.Context()) {
		plan.series.Nonce = fmt.Sprintf("seed-%d", o.load.seed)
	}
	prices, source, err := o.priceTable()
	if err != nil {
		return err
	}
	cands, err := o.candidates()
	if err != nil {
		return err
	}
	label, jsonPath, csvPath, err := o.outputs()
	if err != nil {
		return err
	}
	var first *predict.Candidate
	for _, cand := range cands {
		if cand.Unfit == "" {
			first = cand
			break
		}
	}
	if first == nil {
		for _, cand := range cands {
			fmt.Fprintf(c.ErrOrStderr(), "knee: %s: %s\n", cand.Name, cand.Unfit)
		}
		return usageErr("no configuration given fits its model: see above")
	}
	if err := plan.series.Size(first.Target); err != nil {
		return seriesErr(err)
	}
	base := o.target.config(predictBaseURL, first.Model)
	base.Predicted = true
	plan.series.Describe(&base, axis)
	size := plan.series.MeanSize()
	for _, cand := range cands {
		if cand.Unfit == "" && size > 0 {
			if blocks, bt, err := cand.Target.KVCapacity(); err == nil {
				cand.KVSequences = predict.SequencesHeld(blocks, bt, size)
			}
		}
	}
	levels := plan.series.Levels(first.Target, axis, base)
	level := func(load float64) (*bench.Level, error) { return levels(0, load) }
	out := c.OutOrStdout()
	what := fmt.Sprintf("%s%s", num(target), map[string]string{"rate": "/s", "concurrency": " streams"}[axis])
	if o.findMax {
		what = "the largest load"
	}
	fmt.Fprintf(out, "plan %s · %s · %s · %d configurations · %s windows in virtual time\n", label, what, sizesText(base), len(cands), o.load.duration)
	started := time.Now()
	rows, predictions := predict.Plan(c.Context(), predict.PlanOptions{Candidates: cands, Level: level, Axis: axis, Target: target, SLO: slo,
		Window: o.load.duration.Seconds(), Routings: routings, MaxReplicas: o.replicas, Parallel: o.parallel})
	for i := range rows {
		predict.Price(&rows[i], prices[rows[i].GPU])
	}
	predict.SortPlan(rows, o.findMax)
	p := &results.Plan{SchemaVersion: results.SchemaVersion, Kind: results.PlanKind, Config: base, Environment: environment(), Axis: axis,
		Target: target, FindMax: o.findMax, SLO: slo, WindowS: o.load.duration.Seconds(), Prices: prices, PriceSource: source, Rows: rows,
		Predictions: predictions, Interrupted: c.Context().Err() != nil}
	if o.findMax {
		p.Target = 0
	}
	if size > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("KV seqs: sequences of the workload's size as asked (%.0f tokens, prompt and answer) one replica's KV cache holds", size))
	}
	if o.calibrated != "" {
		if note := first.Target.FitNote(); note != "" {
			p.Notes = append(p.Notes, note)
		}
		p.Caveat = first.Target.FitCaveat()
	} else {
		p.Notes = append(p.Notes, "every figure is the presets' cost model in virtual time (knee presets shows its tuning and docs/fidelity.md its errors): measure the configuration chosen before buying a fleet of it")
	}
	if err := report.Plan(out, p); err != nil {
		return err
	}
	if p.Interrupted {
		fmt.Fprintln(out, "stopped: the configurations searched so far are written; those cut short say so")
	}
	if err := results.WriteJSON(jsonPath, p); err != nil {
		return withCode(ExitRuntime, err)
	}
	b, err := p.CSV()
	if err != nil {
		return err
	}
	if err := results.WriteOutput(csvPath, b); err != nil {
		return withCode(ExitRuntime, err)
	}
	fmt.Fprintf(out, "planned in %s (%d predictions); wrote %s and %s\n", time.Since(started).Round(time.Millisecond), predictions, jsonPath, csvPath)
	if !p.Interrupted && !slices.ContainsFunc(rows, func(r results.PlanRow) bool { return r.Meets }) {
		return &exitError{ExitFailed, errors.New("no configuration searched meets the SLO")}
	}
	return nil
}
