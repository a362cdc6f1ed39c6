package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
	"github.com/spf13/cobra"
)

type runOptions struct {
	target   targetFlags
	load     loadFlags
	voice    voiceFlags
	sim      simFlags
	server   serverFlags
	shard    shardFlags
	workload string
	output   string
	records  string
	cpuProf  string
	quiet    bool
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
	o.voice.register(c, 4, "5s,7s")
	o.sim.register(c)
	o.server.register(c)
	o.shard.register(c, false)
	c.Flags().BoolVar(&o.quiet, "quiet", false, "print neither the report nor progress (e.g. with --output - in a pod, whose log is then the JSON alone)")
	c.Flags().StringVar(&o.workload, "workload", "requests", "requests (independent requests), voice (multi-turn calls) or conversations (a --dataset's recorded conversations replayed as calls)")
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the whole result to this JSON file")
	c.Flags().StringVar(&o.records, "records", "", "stream one JSON line per request to this file")
	c.Flags().StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile of the client to this file (for go tool pprof)")
	_ = c.Flags().MarkHidden("cpuprofile")
	return c
}

func (o *runOptions) run(c *cobra.Command, _ []string) error {
	if err := checkWorkload(o.workload); err != nil {
		return err
	}
	plan, err := buildLevelPlan(c, &o.load, &o.voice, o.workload)
	if err != nil {
		return err
	}
	plan.datasetNeed = datasetNeed(plan.load, []float64{plan.load.Rate}, plan.load.Rate > 0)
	if err := o.target.validate(); err != nil {
		return err
	}
	if pd, ok := plan.src.(*pendingDataset); ok && o.target.endpoint == "completions" {
		if err := pd.checkCompletions(); err != nil {
			return err
		}
	}
	shard, startAt, err := o.shard.parse()
	if err != nil {
		return err
	}
	plan.load.Shard = shard
	// Only shard 0 reads the server's view of the whole load.
	o.server.none = o.server.none || shard.Index > 0
	// Every output is checked before anything is measured, so a run is
	// never measured and then lost.
	if err := checkIO(map[string]string{"--output": o.output, "--records": o.records}, o.load.inputs()); err != nil {
		return err
	}
	if results.IsStdout(o.output) && results.IsStdout(o.records) {
		return usageErr("--output and --records cannot both be standard output")
	}
	ctx := c.Context()
	tgt, err := o.target.resolve(ctx, c, &o.sim)
	if err != nil {
		return err
	}
	defer tgt.stop()
	if err := tgt.fitsContext(longestRequest(&o.load, &o.voice, o.workload == "voice")); err != nil {
		return err
	}
	var records *checkedWriter
	if o.records != "" {
		var f io.WriteCloser = nopWriteCloser{c.OutOrStdout()}
		if o.records != results.Stdout {
			if f, err = results.OpenStreamContext(c.Context(), o.records); err != nil {
				return withCode(ExitRuntime, fmt.Errorf("--records %s: %w", o.records, err))
			}
		}
		records = &checkedWriter{w: f, path: o.records}
		defer records.Close()
	}
	if o.cpuProf != "" {
		f, err := os.Create(o.cpuProf)
		if err != nil {
			return withCode(ExitRuntime, err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return withCode(ExitRuntime, err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	out, errOut := c.OutOrStdout(), c.ErrOrStderr()
	if results.IsStdout(o.output) || results.IsStdout(o.records) {
		// Standard output carries the data; the report goes to stderr.
		out = c.ErrOrStderr()
	}
	if o.quiet {
		out, errOut = io.Discard, io.Discard
	}
	lv := &levelRunner{target: tgt, tf: &o.target, plan: plan, server: &o.server, out: out, errOut: errOut, startAt: startAt}
	if records != nil {
		lv.records = records
	}
	progress := newProgress(errOut)
	lv.progress = func(p bench.Progress) { progress.Update(statusOf(p, "", plan.load.Duration)) }
	res, err := lv.run(ctx, plan.load.Rate, plan.load.Concurrency)
	progress.Done()
	if err != nil {
		return err
	}
	if err := report.Run(out, res); err != nil {
		return err
	}
	if res.Server != nil {
		if err := report.Server(out, res.Server); err != nil {
			return err
		}
	}
	if o.output != "" {
		if err := writeJSON(c, o.output, res); err != nil {
			return withCode(ExitRuntime, fmt.Errorf("writing %s: %w", o.output, err))
		}
		if !results.IsStdout(o.output) {
			fmt.Fprintf(out, "wrote %s\n", o.output)
		}
	}
	if records != nil {
		if err := records.Close(); err != nil {
			return withCode(ExitRuntime, err)
		}
	}
	switch {
	case res.Requests.OK == 0 && res.Requests.Failed > 0:
		return &exitError{ExitFailed, errors.New("every request failed")}
	case res.Requests.OK == 0 && res.Requests.Interrupted > 0 && !res.Interrupted:
		return &exitError{ExitFailed, errors.New("every request was cut by the drain timeout before it finished: nothing was measured")}
	}
	return nil
}

// levelPlan is what every level of a run or sweep shares.
type levelPlan struct {
	// nonce is the command's (see newRunNonce).
	nonce   string
	goodput summary.Goodput
	voice   bool
	load    driver.Load
	src     workload.Source
	vf      *voiceFlags
	lf      *loadFlags
	// datasetNeed is how many dataset entries the run or sweep sends
	// (see datasetNeed).
	datasetNeed int
	// conv, when set, is the dataset whose conversations the calls replay.
	conv *pendingDataset
}

// checkWorkload checks --workload.
func checkWorkload(w string) error {
	switch w {
	case "requests", "voice", "conversations":
		return nil
	}
	return usageErr("--workload must be requests, voice or conversations, got %q", w)
}

// buildLevelPlan validates the load and workload flags.
func buildLevelPlan(c *cobra.Command, lf *loadFlags, vf *voiceFlags, workloadName string) (*levelPlan, error) {
	p := &levelPlan{voice: workloadName != "requests", vf: vf, lf: lf, nonce: newRunNonce()}
	g, err := summary.ParseGoodput(lf.goodput)
	if err != nil {
		return nil, usageErr("--goodput: %v", err)
	}
	p.goodput = g
	if workloadName == "requests" && lf.dataset != "" && !c.Flags().Changed("workload") && lf.concurrency == 0 {
		// AIPerf's multi_turn files are sessions: replay them as such.
		if pd, err := lf.data.parse(lf.dataset); err == nil && pd.format == workload.FormatMultiTurn {
			p.voice, p.conv = true, pd
		}
	}
	if workloadName == "conversations" {
		if lf.dataset == "" {
			return nil, usageErr("--workload conversations replays a --dataset's conversations (ShareGPT, chat or multi_turn): give --dataset")
		}
		pd, err := lf.data.parse(lf.dataset)
		if err != nil {
			return nil, err
		}
		if len(pd.parsed.Conversations) == 0 {
			return nil, usageErr("--dataset %s (%s) holds no conversations to replay (ShareGPT, chat and multi_turn files do)", lf.dataset, pd.format)
		}
		p.conv = pd
	}
	if p.voice {
		what := "the voice workload is open loop: give --rate (calls per second), not --concurrency"
		if p.conv != nil {
			what = "conversations arrive open loop, as calls: give --rate (conversations per second), not --concurrency"
		}
		if lf.concurrency > 0 {
			return nil, usageErr("%s", what)
		}
		if err := lf.check(c); err != nil {
			return nil, err
		}
		if _, err := vf.build(lf.seed); err != nil && p.conv == nil {
			return nil, err
		}
		if vf.calls == 0 && lf.duration == 0 {
			vf.calls = 20
		}
		p.load = driver.Load{Rate: lf.rate, Duration: lf.duration, Seed: lf.seed, Burstiness: 1, DrainTimeout: lf.drain}
		return p, nil
	}
	load, src, err := lf.build(c)
	if err != nil {
		return nil, err
	}
	p.load = load
	p.src = src
	return p, nil
}

// levelRunner runs one level (a run, or one step of a sweep).
type levelRunner struct {
	target      *resolved
	tf          *targetFlags
	plan        *levelPlan
	server      *serverFlags
	records     io.Writer
	recordLevel *float64
	out, errOut io.Writer
	progress    func(bench.Progress)
	calibrated  *bench.Calibration
	sized       *workload.Synthetic
	sizedNote   string
	dataset     *workload.Dataset
	datasetNote string
	// datasetNext is the dataset entry (or conversation) the next level
	// starts at.
	datasetNext int
	convs       *workload.Conversations
	levels      int
	// startAt is when this level's window starts (zero: when ready).
	startAt time.Time
}

// newRunNonce is random per command: it opens every synthetic prompt and
// call identifier, so no run or sweep level is flattered by prefixes an
// earlier one left in the server's cache. KNEE_RUN_NONCE fixes it, so that
// two processes (a live sweep and its prediction, or a run's shards) send
// the very same prompts.
func newRunNonce() string {
	return cmp.Or(os.Getenv("KNEE_RUN_NONCE"), fmt.Sprintf("%08x", rand.Uint32()))
}

// nextNonce returns the nonce of the next level.
func (lv *levelRunner) nextNonce() string {
	lv.levels++
	return lv.plan.levelNonce(lv.levels)
}

// levelNonce is the nonce of level n (from 1) of this command.
func (p *levelPlan) levelNonce(n int) string { return fmt.Sprintf("[%s.%d]", p.nonce, n) }

// run measures one level at the given rate or concurrency.
func (lv *levelRunner) run(ctx context.Context, rate float64, concurrency int) (*results.Run, error) {
	p := lv.plan
	cfg := lv.tf.config(lv.target.target.BaseURL, lv.target.target.Model)
	cfg.BuiltinSim = lv.target.builtin
	if p.voice {
		return lv.runVoice(ctx, rate, cfg)
	}
	load := p.load
	if rate > 0 {
		load.Rate, load.Concurrency = rate, 0
	} else if concurrency > 0 {
		load.Concurrency, load.Rate = concurrency, 0
	}
	p.lf.config(&cfg, load)
	client, err := transport.NewClient(lv.target.target, load.PoolSize())
	if err != nil {
		return nil, usageErr("%v", err)
	}
	defer client.Close()
	src := p.src
	var sizeNote string
	if syn, ok := src.(workload.Synthetic); ok {
		syn.Nonce = lv.nextNonce()
		if !p.lf.noCalibrate {
			// Calibrated once per run or sweep; later levels reuse the fit
			// with their own nonce.
			if lv.sized == nil {
				if lv.calibrated == nil {
					cal := bench.Calibrate(client)
					lv.calibrated = &cal
				}
				fit, note := bench.SizedPrompts(client, *lv.calibrated, syn)
				lv.sized, lv.sizedNote = &fit, note
			}
			syn.Tokens, syn.WordsPerToken = lv.sized.Tokens, lv.sized.WordsPerToken
			sizeNote = lv.sizedNote
		}
		src = syn
	}
	var tracked *trackedDataset
	pd, _ := src.(*pendingDataset)
	if pd != nil {
		if lv.dataset == nil {
			ds, note, err := pd.size(client, p.lf.maxTokens, p.datasetNeed, load.Seed)
			if err != nil {
				return nil, err
			}
			if pd.lengthsOnly() {
				ds.Blocks.WordsPerToken = lv.calibrate(client).WordsPerToken
			}
			ds.Blocks.Nonce = lv.plan.nonce
			lv.dataset, lv.datasetNote = &ds, note
		}
		tracked = &trackedDataset{Dataset: *lv.dataset}
		switch {
		case load.Trace != nil:
			// Every level replays the whole trace, faster or slower; its
			// blocks are the level's own text (the nonce), so one level's
			// never warm the next.
			speedup := load.Rate / workload.TraceRate(workload.TraceSchedule(tracked.Entries, 1))
			load.Trace = workload.TraceSchedule(tracked.Entries, speedup)
			tracked.Blocks.Nonce = lv.nextNonce()
			cfg.TraceSpeedup = speedup
		case !pd.repeat:
			tracked.Offset = lv.datasetNext
		}
		src = tracked
		sizeNote = lv.datasetNote
		cfg.DatasetFormat = string(pd.format)
		sizing := pd.sizing
		sizing.Offset = tracked.Offset
		cfg.DatasetSizing = &sizing
	}
	opts := bench.Options{Client: client, Source: src, Load: load, Config: cfg, Records: lv.records, RecordLevel: lv.recordLevel,
		Progress: lv.progress, Goodput: p.goodput, StartAt: lv.startAt}
	view := lv.server.attach(ctx, lv.target, &opts.OnWindowStart, &opts.OnWindowEnd)
	res, err := bench.Run(ctx, opts)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	res.Environment = environment()
	if sizeNote != "" && lv.calibrated != nil && lv.dataset == nil {
		res.Notes = append(res.Notes, lv.calibrated.String())
	}
	if sizeNote != "" {
		res.Notes = append(res.Notes, sizeNote)
	}
	if want := p.lf.inputTokens + p.lf.prefixTokens; p.lf.inputTokens > 0 {
		res.Warnings = append(res.Warnings, results.InputSizeWarnings(want, res.Tokens)...)
	}
	if tracked != nil {
		resent := ""
		switch {
		case lv.datasetNext == 0:
		case load.Trace != nil && !pd.lengthsOnly():
			resent = "every level replays the whole trace: the lines that carry text resend an earlier level's prompts, which a prefix-caching server answers warm"
		case pd.repeat:
			resent = "--dataset-repeat: this level resent the prompts of earlier levels; a prefix-caching server answers them warm"
		}
		if w := tracked.repeatWarning(resent); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
		lv.datasetNext = tracked.Offset + tracked.used()
	}
	view.finish(res)
	return res, nil
}

// calibrate sends the filler calibration once per run or sweep.
func (lv *levelRunner) calibrate(client bench.Prober) bench.Calibration {
	if lv.calibrated == nil {
		cal := bench.Calibrate(client)
		lv.calibrated = &cal
	}
	return *lv.calibrated
}

func (lv *levelRunner) runVoice(ctx context.Context, rate float64, cfg results.Config) (*results.Run, error) {
	p := lv.plan
	pool := 16384
	if p.vf.maxCalls > 0 {
		pool = p.vf.maxCalls
	}
	client, err := transport.NewClient(lv.target.target, pool)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	defer client.Close()
	var opts bench.VoiceOptions
	var tracked *trackedCalls
	if p.conv != nil {
		if lv.convs == nil {
			cv, note := p.conv.sizeConversations(client, p.lf.maxTokens, p.lf.seed)
			cv.GapMin, cv.GapMax, _ = parseGap(p.vf.gap)
			lv.convs, lv.datasetNote = &cv, note
		}
		tracked = &trackedCalls{Conversations: *lv.convs}
		if !p.conv.repeat {
			tracked.Offset = lv.datasetNext
		}
		sizing := p.conv.sizing
		sizing.Offset = tracked.Offset
		cfg.DatasetSizing = &sizing
		opts = p.callOptions(tracked, rate, cfg)
	} else {
		v, err := p.vf.build(p.lf.seed)
		if err != nil {
			return nil, err
		}
		v.WordsPerToken = lv.calibrate(client).WordsPerToken
		v.Nonce = lv.nextNonce()
		opts = p.voiceOptions(v, rate, cfg)
	}
	opts.Client, opts.Progress, opts.Shard, opts.StartAt = client, lv.progress, p.load.Shard, lv.startAt
	if lv.records != nil {
		opts.Records, opts.RecordLevel = lv.records, lv.recordLevel
	}
	view := lv.server.attach(ctx, lv.target, &opts.OnWindowStart, &opts.OnWindowEnd)
	res, err := bench.RunVoice(ctx, opts)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	res.Environment = environment()
	if tracked != nil {
		res.Notes = append(res.Notes, lv.datasetNote)
		if w := tracked.repeatWarning(p.conv.repeat && lv.datasetNext > 0); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
		lv.datasetNext = tracked.Offset + tracked.used()
	} else {
		res.Notes = append(res.Notes, lv.calibrated.String())
	}
	view.finish(res)
	return res, nil
}

// voiceOptions is one level of the call workload at rate, live or
// predicted: the calls, their bounds and the configuration recorded.
func (p *levelPlan) voiceOptions(v workload.Voice, rate float64, cfg results.Config) bench.VoiceOptions {
	o := bench.VoiceOptions{CallSource: v, Rate: rate, Calls: p.vf.calls, Duration: p.lf.duration, MaxConcurrentCalls: p.vf.maxCalls,
		Seed: p.lf.seed, DrainTimeout: p.lf.drain, Goodput: p.goodput}
	bench.RecordVoice(&cfg, v, o)
	o.Config = cfg
	return o
}

// callOptions is one level of a dataset's conversations at rate, live or
// predicted.
func (p *levelPlan) callOptions(src workload.Calls, rate float64, cfg results.Config) bench.VoiceOptions {
	p.describe(&cfg, "rate")
	cfg.Rate = rate
	return bench.VoiceOptions{CallSource: src, Rate: rate, Calls: p.vf.calls, Duration: p.lf.duration, MaxConcurrentCalls: p.vf.maxCalls,
		Seed: p.lf.seed, Config: cfg, DrainTimeout: p.lf.drain, Goodput: p.goodput}
}

// describe fills a sweep's top-level configuration with what every level
// shares: workload, mode, token sizes, seed and warm-up.
func (p *levelPlan) describe(c *results.Config, axis string) {
	if p.conv != nil {
		lo, hi, _ := parseGap(p.vf.gap)
		c.Workload, c.Mode, c.Seed, c.MaxTokens = results.WorkloadConversations, results.ModeOpen, p.lf.seed, p.lf.maxTokens
		c.Dataset, c.DatasetFormat = p.conv.path, string(p.conv.format)
		c.DurationS = p.lf.duration.Seconds()
		c.Conversations = &results.ConversationConfig{GapMinS: lo.Seconds(), GapMaxS: hi.Seconds(), LiveHistory: p.conv.liveHistory,
			Calls: p.vf.calls, MaxConcurrentCalls: p.vf.maxCalls}
		return
	}
	if p.voice {
		if v, err := p.vf.build(p.lf.seed); err == nil {
			bench.RecordVoice(c, v, bench.VoiceOptions{Calls: p.vf.calls, Duration: p.lf.duration, MaxConcurrentCalls: p.vf.maxCalls, Seed: p.lf.seed})
		}
		c.Workload, c.Mode, c.Seed = results.WorkloadVoice, results.ModeOpen, p.lf.seed
		c.DurationS = p.lf.duration.Seconds()
		return
	}
	load := p.load
	if axis == "concurrency" && load.Concurrency == 0 {
		load.Concurrency = 1
	}
	p.lf.config(c, load)
	// The level's own rate or concurrency is in each level's config.
	c.Rate, c.Concurrency = 0, 0
}
