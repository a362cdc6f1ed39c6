package cmd

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/server"
	"github.com/spf13/cobra"
)

// planOptions are knee plan's: a workload at a target load, the SLOs, and
// the configurations to search.
type planOptions struct {
	target     targetFlags
	load       loadFlags
	sim        simFlags
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
	// reasoningTokens and toolCalls are --reasoning-tokens and
	// --tool-calls: how every candidate model thinks and calls tools.
	reasoningTokens int
	toolCalls       string
	// vision is --vision: the candidates' vision-language rule; policy
	// is --scheduling-policy, loras --lora-adapters and maxLoRAs
	// --max-loras.
	vision, policy, loras string
	maxLoRAs              int
	// longPrefill is --long-prefill-token-threshold; schedulesAs is
	// --schedules-as.
	longPrefill int
	schedulesAs string
	// disagg is --disaggregated, linkGbps --kv-link-gbps.
	disagg   bool
	linkGbps float64
	// calibratedOnly is --calibrated-only; seeds is --seeds; gemmTiles
	// is --gemm-tiles.
	calibratedOnly, gemmTiles bool
	seeds                     int
	// day is --trace, --autoscale and --min-attainment.
	day dayFlags
	// cpuProf is the hidden --cpuprofile: where planning's CPU profile goes.
	cpuProf string
}

func newPlanCmd() *cobra.Command {
	o := &planOptions{}
	c := &cobra.Command{
		Use:   "plan",
		Short: "Find the cheapest GPUs that serve a load within its SLOs, in virtual time",
		Long: `plan answers the capacity question: how many of which GPUs serve this
workload at this load within these SLOs. For every GPU (--gpus), model and
format (--model-presets), tensor-parallel size (--tp) and routing policy
(--routing) it predicts levels in virtual time on the simulator's scheduler
core (as knee predict does): one replica's capacity by bisection, then the
fewest replicas meeting every SLO at the target (--rate or --concurrency;
calls per second with --workload voice), their headroom (the largest load
they still meet, by bisection), their figures at the target, and their cost
per hour and per million output tokens. The table lists the configurations
that meet every SLO, cheapest first, then those that do not, with why.

An SLO is every --slo bound (METRIC.pNN:MS, a latency at p50, p90, p95 or
p99), errors under --max-error-rate, at most 2% of requests cut or unsent, no
saturation, and, with --goodput and goodput:PERCENT in --slo, that share of
requests meeting every goodput bound. Prices are per GPU-hour: --prices FILE
(YAML or JSON, GPU: dollars), or the example prices shipped with knee, which
every cost says it came from. --calibrated FILE plans on a fitted models file
(knee calibrate) instead of presets. --find-max-rate asks the inverse: the
largest load a fleet (--gpus GPUxN: N GPUs in all) holds, split into
replicas of each --tp.

Every prediction is exact in virtual time; what it stands on is the cost
model's fit (see knee presets, and docs/fidelity.md): measure the chosen
configuration before buying a fleet of it.`,
		Example: `  knee plan --rate 50 --input-tokens 1000 --max-tokens 200 --slo ttft.p95:500 --gpus h100-80gb,a100-80gb,l40s
  knee plan --rate 20 --model-presets llama-3.1-70b,llama-3.1-70b@fp8 --gpus h100-80gb,h200 --slo ttft.p95:800,tpot.p50:50
  knee plan --gpus h100-80gbx8 --find-max-rate --input-tokens 512 --max-tokens 128 --slo ttft.p95:300
  knee plan --rate 20 --input-tokens 4000 --max-tokens 200 --slo ttft.p95:2000 --disaggregated`,
		Args: goodputArgs(&o.load),
		RunE: runtimeErrors(o.run),
	}
	o.register(c)
	hideFlags(c, liveOnly)
	withLoadFile(c, &o.load)
	return c
}

func (o *planOptions) register(c *cobra.Command) {
	o.target.register(c)
	fs := c.Flags()
	fs.Float64Var(&o.load.Rate, "rate", 0, "the load to serve: arrivals per second (calls per second with --workload voice)")
	fs.IntVar(&o.load.Concurrency, "concurrency", 0, "the load to serve: closed-loop streams")
	fs.DurationVar(&o.load.Duration, "duration", 10*time.Minute, "simulated window of every prediction")
	o.load.registerShared(c)
	// A plan keeps no level's time slices: it shows none, and its
	// predictions are many.
	_ = fs.MarkHidden("slice")
	o.sim.registerResponses(c)
	o.load.registerWorkload(c, "requests, voice, or conversations (a --dataset's conversations replayed as calls)")
	o.slo.register(c, "ttft.p95:500", "what every configuration", false)
	fs.StringVar(&o.gpus, "gpus", "h100-80gb", "GPU presets to consider, comma-separated (GPUxN fixes the tensor-parallel size, or with --find-max-rate the fleet's GPUs)")
	fs.StringVar(&o.models, "model-presets", "llama-3.1-8b", "model presets to consider, MODEL[@DTYPE[,kv=DTYPE]], comma-separated")
	aliasFlags(c, map[string]string{"window": "duration", "models": "model-presets"})
	fs.StringVar(&o.tps, "tp", "auto", "tensor-parallel sizes to consider, comma-separated (auto: the smallest power of two the model fits and twice it; with --find-max-rate every power of two dividing the fleet)")
	fs.StringVar(&o.routing, "routing", "round-robin,least-loaded", "routing policies to consider for more than one replica: round-robin, random, least-loaded, prefix-affinity, adapter-affinity (a LoRA adapter's requests kept on one replica); calls (--workload voice or conversations) default to prefix-affinity, so a call's turns find its cached prompt")
	fs.IntVar(&o.replicas, "max-replicas", 64, "the most replicas a configuration may have")
	fs.StringVar(&o.prices, "prices", "", "prices per GPU-hour, a YAML or JSON map of GPU name to dollars (default: knee's examples, marked as such)")
	fs.StringVar(&o.calibrated, "calibrated", "", "plan on this fitted models file (knee calibrate -o) instead of presets")
	fs.BoolVar(&o.findMax, "find-max-rate", false, "find the largest load each fleet of --gpus GPUxN holds, instead of the replicas for a target")
	fs.BoolVar(&o.disagg, "disaggregated", false, "weigh prefill/decode splits (xPyD: P prefill and D decode replicas, the prompts' KV shipped between them) beside aggregated replicas")
	fs.Float64Var(&o.linkGbps, "kv-link-gbps", 400, "with --disaggregated: each decode replica's link for the KV it receives, Gb/s (400: one ConnectX-7 NIC)")
	fs.StringVar(&o.label, "label", "", "name of the result files (default plan-<date>-<time>, -2 on when that is taken)")
	fs.StringVar(&o.outDir, "out-dir", "results", "folder of the result files")
	markInputs(c, "prices", "calibrated")
	markOutputs(c, "out-dir")
	fs.IntVar(&o.parallel, "parallel", 0, "configurations searched at once (default: one per CPU)")
	fs.IntVar(&o.reasoningTokens, "reasoning-tokens", 0, "every candidate model thinks this many tokens before it answers (a reasoning model; bound its first answer token with --slo ttfat_p95:MS)")
	fs.StringVar(&o.vision, "vision", "", "every candidate model takes images by this family's rule ("+strings.Join(server.VisionFamilyNames(), ", ")+"; see knee sim's vision:), for --image-count or an image dataset")
	fs.IntVar(&o.seeds, "seeds", 3, "a fleet counts as meeting the SLO at the target only on this many arrival schedules (seeds); a row whose fewest replicas met it on some is marked on a cliff, with the count that meets it on all")
	fs.BoolVar(&o.calibratedOnly, "calibrated-only", false, "leave out configurations on GPUs whose cost model was never fitted to a measurement (a priori figures)")
	fs.BoolVar(&o.gemmTiles, "gemm-tiles", false, "slow every candidate's matrix products in small steps and narrow tensor-parallel slices by its GPU's fitted kernel table (hopper, blackwell: knee presets; docs/fidelity.md); rows marked · gemm_tiles, the others keep one efficiency")
	fs.StringVar(&o.policy, "scheduling-policy", "", "every candidate schedules fcfs or by priority (vLLM's --scheduling-policy), or with --schedules-as sglang by lpm (longest cached prefix first): plan a mix with priorities under each, on the same seed, to compare them")
	fs.StringVar(&o.loras, "lora-adapters", "", "NAME,NAME...: every candidate serves these LoRA adapters, as vLLM's LoRA modules (a mix class's model names one)")
	fs.IntVar(&o.longPrefill, "long-prefill-token-threshold", 0, "every candidate computes at most this many tokens of one request a step, as vLLM's --long-prefill-token-threshold (0: off, vLLM's default: a long prompt takes a step's whole budget and short requests queue behind it)")
	fs.StringVar(&o.schedulesAs, "schedules-as", "", "every candidate schedules by an engine's rules: "+server.EngineNames()+
		" (default vllm: V1's); several, comma-separated, plan each configuration under each to compare them (docs/simulator.md)")
	fs.IntVar(&o.maxLoRAs, "max-loras", 1, "with --lora-adapters: adapters a batch may hold (vLLM's --max-loras)")
	fs.StringVar(&o.toolCalls, "tool-calls", "", "SHARE:TOKENS: with --tools, every candidate model answers SHARE of requests (1 with --tool-choice required) with a call of TOKENS argument tokens")
	o.day.register(c)
	fs.StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile of planning to this file (for go tool pprof)")
	_ = fs.MarkHidden("cpuprofile")
	markOutputs(c, "cpuprofile")
	c.MarkFlagsMutuallyExclusive("rate", "concurrency")
	c.MarkFlagsMutuallyExclusive("calibrated", "gpus")
	c.MarkFlagsMutuallyExclusive("calibrated", "model-presets")
	c.MarkFlagsMutuallyExclusive("calibrated", "tp")
	c.MarkFlagsMutuallyExclusive("calibrated", "gemm-tiles")
}

// check checks the plan's own flags and returns its axis and target.
func (o *planOptions) check(c *cobra.Command) (string, float64, error) {
	if c.Flags().Changed("image-count") && o.vision == "" {
		return "", 0, usageErr("--image-count: the candidates' models take images only as a vision-language model: give --vision (%s)", strings.Join(server.VisionFamilyNames(), ", "))
	}
	if err := bench.CheckWorkload(o.load.Workload); err != nil {
		return "", 0, usageErr("%w", err)
	}
	if o.target.BaseURL != "" {
		return "", 0, usageErr("knee plan sends nothing: drop --base-url (it predicts in virtual time)")
	}
	if err := refuseLiveOnly(c); err != nil {
		return "", 0, err
	}
	if c.Flags().Changed("requests") {
		return "", 0, usageErr("a plan's predictions are bounded by --duration, not --requests")
	}
	peak, err := o.day.load(c, o)
	if err != nil {
		return "", 0, err
	}
	if peak > 0 {
		o.load.Rate = peak
	}
	axis, target := "rate", o.load.Rate
	if o.load.Concurrency > 0 {
		axis, target = "concurrency", float64(o.load.Concurrency)
	}
	switch {
	case o.findMax && target > 0:
		return "", 0, usageErr("--find-max-rate finds the load: give no --rate or --concurrency")
	case !o.findMax && !(target > 0):
		return "", 0, usageErr("give the load to serve: --rate R (or --concurrency N), or --find-max-rate")
	case o.load.Duration < time.Minute || o.load.Duration > 24*time.Hour:
		return "", 0, usageErr("--duration must be between 1m and 24h (a queue needs minutes to show)")
	case o.replicas < 1 || o.replicas > 1024 || o.parallel < 0:
		return "", 0, usageErr("--max-replicas must be 1 to 1024 and --parallel not negative")
	}
	return axis, target, nil
}

// question builds the capacity question from the flags, its series sized
// against the first candidate that fits, and names the plan's files.
func (o *planOptions) question(c *cobra.Command) (*predict.Question, string, report.SweepFiles, error) {
	var q predict.Question
	var err error
	fail := func(err error) (*predict.Question, string, report.SweepFiles, error) {
		return nil, "", report.SweepFiles{}, err
	}
	if q.Axis, q.Target, err = o.check(c); err != nil {
		return fail(err)
	}
	o.load.Slice = 0
	if q.SLO, err = o.slo.parse(c, o.load.Goodput); err != nil {
		return fail(err)
	}
	if q.Routings, err = o.routings(c); err == nil {
		q.Disagg, err = o.disaggregated(c)
	}
	if err != nil {
		return fail(err)
	}
	if o.findMax && o.load.Rate == 0 && o.load.Concurrency == 0 {
		// The levels' rates are the search's; a placeholder for the flags'
		// checks.
		o.load.Rate = 1
	}
	plan, err := o.load.prepare(c, o.target.Endpoint)
	if err != nil {
		return fail(err)
	}
	if plan.Load.Trace != nil {
		return fail(usageErr("a trace's timestamps are its load: plan for it with --rate (its mean rate), not yet supported for traces"))
	}
	if !bench.NonceFixed(c.Context()) {
		plan.Series.Nonce = fmt.Sprintf("seed-%d", o.load.Seed)
	}
	if q.Prices, q.PriceSource, err = o.priceTable(c.Context()); err != nil {
		return fail(err)
	}
	if q.Candidates, err = o.candidates(c.Context()); err != nil {
		return fail(err)
	}
	if o.prices != "" {
		if err := predict.PricesCover(q.Prices, o.prices, q.Candidates); err != nil {
			return fail(usageErr("%w", err))
		}
	}
	label, files, err := o.outputs()
	if err != nil {
		return fail(err)
	}
	q.Series, q.FindMax, q.Window, q.MaxReplicas, q.Parallel, q.Calibrated = plan.Series, o.findMax, o.load.Duration, o.replicas, o.parallel, o.calibrated != ""
	if o.seeds < 1 || o.seeds > 20 {
		return fail(usageErr("--seeds %d: 1 to 20 arrival schedules", o.seeds))
	}
	q.Seeds = o.seeds
	if q.Day, err = o.day.question(c, predict.FirstFit(q.Candidates), o.replicas); err != nil {
		return fail(err)
	}
	if im := plan.Series.Workload.Images; im != nil && o.vision != "" {
		// A request's images by the candidates' rule: its sizes in turn.
		v := server.VisionSpec{Family: o.vision}
		_ = v.Validate() // checked with the candidates
		for k := range im.Count {
			sz := im.Sizes[k%len(im.Sizes)]
			q.ImageTokens += float64(v.Tokens(sz.W, sz.H))
		}
	}
	return &q, label, files, o.size(c, &q)
}

// routings are the routing policies to plan behind; a call's turns share
// its prompt, so spread over replicas each turn would land where that
// prompt is not cached: calls route by prefix unless told otherwise.
func (o *planOptions) routings(c *cobra.Command) ([]predict.Routing, error) {
	if !c.Flags().Changed("routing") && (o.load.Workload == "voice" || o.load.Workload == "conversations") {
		o.routing = string(predict.PrefixAffinity)
	}
	var out []predict.Routing
	for _, r := range predict.SplitList(o.routing) {
		p, err := predict.ParseRouting(r)
		if err != nil {
			return nil, usageErr("--routing: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// disaggregated is --disaggregated's question, checked: a target load's,
// on a link that carries something.
func (o *planOptions) disaggregated(c *cobra.Command) (*predict.PlanDisagg, error) {
	if !o.disagg {
		if c.Flags().Changed("kv-link-gbps") {
			return nil, usageErr("--kv-link-gbps is the link of --disaggregated's splits: give --disaggregated too")
		}
		return nil, nil
	}
	switch {
	case !(o.linkGbps > 0) || math.IsInf(o.linkGbps, 0):
		return nil, usageErr("--kv-link-gbps %v: the link's speed must be a positive number of Gb/s", o.linkGbps)
	case o.findMax:
		return nil, usageErr("--disaggregated weighs splits for a target load: give --rate or --concurrency, not --find-max-rate")
	case o.day.trace != "":
		return nil, usageErr("--disaggregated with --trace is not supported yet: plan the day's peak with --rate")
	}
	return &predict.PlanDisagg{LinkGbps: o.linkGbps}, nil
}

// size sizes the question's workload against the first configuration
// that fits its model, whose configuration is the plan's.
func (o *planOptions) size(c *cobra.Command, q *predict.Question) error {
	first := predict.FirstFit(q.Candidates)
	if first == nil {
		for _, cand := range q.Candidates {
			fmt.Fprintf(c.ErrOrStderr(), "knee: %s: %s\n", cand.Name, cand.Unfit)
		}
		return usageErr("no configuration given fits its model: see above")
	}
	if err := q.Series.Size(first.Target); err != nil {
		return seriesErr(err)
	}
	q.Base = o.target.config(predictBaseURL, first.Model)
	q.Base.Predicted = true
	q.Series.Describe(&q.Base, q.Axis)
	return usage(q.Check())
}

func (o *planOptions) run(c *cobra.Command, _ []string) error {
	q, label, files, err := o.question(c)
	if err != nil {
		return err
	}
	if o.cpuProf != "" {
		stop, err := startCPUProfile(o.cpuProf)
		if err != nil {
			return withCode(ExitRuntime, err)
		}
		defer stop()
	}
	out := c.OutOrStdout()
	what := fmt.Sprintf("%s%s", num(q.Target), map[string]string{"rate": "/s", "concurrency": " streams"}[q.Axis])
	if o.findMax {
		what = "the largest load"
	}
	report.Wrapf(out, 5, "plan %s · %s · %s · %d configurations · %s windows in virtual time\n", label, what, report.Sizes(q.Base), len(q.Candidates), o.load.Duration)
	started := time.Now()
	ticker := report.NewPlanTicker(len(q.Candidates), q.Prices, started)
	q.Searched = ticker.Searched
	stop := ticker.Show(c.ErrOrStderr())
	p := predict.Answer(c.Context(), *q)
	stop()
	p.Environment = environment()
	if err := report.Plan(out, p); err != nil {
		return err
	}
	if p.Interrupted && p.Predictions == 0 && results.HoldsResult(files.JSON) {
		fmt.Fprintf(out, "kept %s: the plan was stopped before it predicted anything\n", files.JSON)
		return nil
	}
	if p.Interrupted {
		fmt.Fprintln(out, "stopped: the configurations searched so far are written; those cut short say so")
	}
	if err := results.WriteJSON(files.JSON, p); err != nil {
		return withCode(ExitRuntime, err)
	}
	b, err := p.CSV()
	if err != nil {
		return err
	}
	if err := results.WriteOutput(files.CSV, b); err != nil {
		return withCode(ExitRuntime, err)
	}
	wrote := files.JSON + " and " + files.CSV
	if p.Day != nil && len(p.Day.Policies) > 0 {
		if err := dayCSV(o.dayPath(files), p.Day); err != nil {
			return err
		}
		wrote = files.JSON + ", " + files.CSV + " and " + o.dayPath(files)
	}
	report.Wrapf(out, 6, "planned in %s (%d predictions); wrote %s\n", time.Since(started).Round(time.Millisecond), p.Predictions, wrote)
	if !p.Interrupted && !slices.ContainsFunc(p.Rows, func(r results.PlanRow) bool { return r.Meets }) {
		return &exitError{ExitFailed, errors.New("no configuration searched meets the SLO")}
	}
	return nil
}
