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

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/summary"
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
	dash     dashboardFlag
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
	o.dash.register(c)
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
	plan.series.Need = bench.DatasetNeed(plan.load, []float64{plan.load.Rate}, plan.load.Rate > 0)
	if err := o.target.validate(); err != nil {
		return err
	}
	if err := plan.checkCompletions(o.target.endpoint); err != nil {
		return err
	}
	shard, startAt, err := o.shard.parse()
	if err != nil {
		return err
	}
	plan.load.Shard = shard
	plan.setLoad(plan.load)
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
	live := o.target.live(tgt, &o.server, o.dash.on())
	defer live.Close()
	live.StartAt = startAt
	progress := newProgress(errOut)
	live.Progress = func(_ *bench.Level, p bench.Progress) {
		progress.Update(statusOf(p, "", plan.load.Duration))
		o.dash.status(p, "run", 0, 0, plan.load.Duration, plan.load.Rate)
	}
	level, err := plan.series.Level(0, live, plan.load.Rate, plan.load.Concurrency, o.target.levelConfig(tgt))
	if err != nil {
		return seriesErr(err)
	}
	if records != nil {
		level.Records = records
	}
	res, err := live.Run(ctx, level)
	progress.Done()
	if err != nil {
		return usageErr("%w", err)
	}
	o.dash.run(res)
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

// levelPlan is what every level of a run or sweep shares: the series
// that prepares them, and the flags it was built from.
type levelPlan struct {
	series *bench.Series
	// calls says the levels send calls (voice, or a dataset's
	// conversations), and conv a dataset's conversations.
	calls, conv bool
	load        driver.Load
	vf          *voiceFlags
	lf          *loadFlags
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
	p := &levelPlan{calls: workloadName != "requests", vf: vf, lf: lf}
	g, err := summary.ParseGoodput(lf.goodput)
	if err != nil {
		return nil, usageErr("--goodput: %v", err)
	}
	s := &bench.Series{Goodput: g, Nonce: newRunNonce(c.Context())}
	p.series = s
	var conv *bench.DatasetFile
	if workloadName == "requests" && lf.dataset != "" && !c.Flags().Changed("workload") && lf.concurrency == 0 {
		// AIPerf's multi_turn files are sessions: replay them as such.
		if pd, err := lf.data.parse(lf.dataset); err == nil && pd.Format() == workload.FormatMultiTurn {
			p.calls, conv = true, pd
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
		if len(pd.Parsed.Conversations) == 0 {
			return nil, usageErr("--dataset %s (%s) holds no conversations to replay (ShareGPT, chat and multi_turn files do)", lf.dataset, pd.Format())
		}
		conv = pd
	}
	if p.calls {
		what := "the voice workload is open loop: give --rate (calls per second), not --concurrency"
		if conv != nil {
			what = "conversations arrive open loop, as calls: give --rate (conversations per second), not --concurrency"
		}
		if lf.concurrency > 0 {
			return nil, usageErr("%s", what)
		}
		if err := lf.check(c); err != nil {
			return nil, err
		}
		v, err := vf.build(lf.seed)
		if err != nil && conv == nil {
			return nil, err
		}
		if vf.calls == 0 && lf.duration == 0 {
			vf.calls = 20
		}
		w := bench.Workload{MaxTokens: lf.maxTokens, Calls: vf.calls, MaxConcurrentCalls: vf.maxCalls}
		if conv != nil {
			p.conv = true
			w.Dataset, w.Conversations = conv, true
			w.GapMin, w.GapMax, _ = parseGap(vf.gap)
		} else {
			w.Voice = &v
		}
		s.Workload = w
		p.load = driver.Load{Rate: lf.rate, Duration: lf.duration, Seed: lf.seed, Burstiness: 1, DrainTimeout: lf.drain}
		s.Load = p.load
		return p, nil
	}
	load, w, err := lf.build(c)
	if err != nil {
		return nil, err
	}
	p.load, s.Load, s.Workload = load, load, w
	return p, nil
}

// setLoad sets the plan's load, and the series' with it.
func (p *levelPlan) setLoad(l driver.Load) { p.load, p.series.Load = l, l }

// checkCompletions refuses, before anything is sent, dataset entries that
// the completions endpoint would be sent as empty prompts.
func (p *levelPlan) checkCompletions(endpoint string) error {
	if d := p.dataset(); d != nil && endpoint == "completions" {
		if err := d.CheckCompletions(); err != nil {
			return usageErr("--dataset %v", err)
		}
	}
	return nil
}

// dataset is the levels' dataset file of single requests, if they send one.
func (p *levelPlan) dataset() *bench.DatasetFile {
	if p.conv {
		return nil
	}
	return p.series.Workload.Dataset
}

// newRunNonce is random per command: it opens every synthetic prompt and
// call identifier, so no run or sweep level is flattered by prefixes an
// earlier one left in the server's cache. KNEE_RUN_NONCE fixes it, so that
// two processes (a live sweep and its prediction, or a run's shards) send
// the very same prompts; so does a nonce in ctx (withNonce), for commands
// run side by side in one process.
func newRunNonce(ctx context.Context) string {
	if ctx != nil {
		if n, ok := ctx.Value(nonceKey{}).(string); ok {
			return n
		}
	}
	return cmp.Or(os.Getenv("KNEE_RUN_NONCE"), fmt.Sprintf("%08x", rand.Uint32()))
}

// nonceFixed reports whether the nonce is fixed (KNEE_RUN_NONCE, or ctx's
// own) rather than drawn.
func nonceFixed(ctx context.Context) bool {
	if ctx != nil {
		if _, ok := ctx.Value(nonceKey{}).(string); ok {
			return true
		}
	}
	return os.Getenv("KNEE_RUN_NONCE") != ""
}

// nonceKey keys a command's fixed nonce in its context.
type nonceKey struct{}

// withNonce is ctx whose commands take nonce as their own (see
// newRunNonce).
func withNonce(ctx context.Context, nonce string) context.Context {
	return context.WithValue(ctx, nonceKey{}, nonce)
}

// seriesErr is an error preparing a series' level: the user's to fix
// (their dataset's bounds) or the run's.
func seriesErr(err error) error {
	if errors.Is(err, bench.ErrFilteredOut) {
		return usageErr("--dataset %v", err)
	}
	return err
}
