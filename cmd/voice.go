package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
	"github.com/spf13/cobra"
)

// voiceFlags are the knobs of the multi-turn call workload.
type voiceFlags struct {
	systemTokens int
	userTokens   int
	turns        int
	gap          string
	outputTokens int
	calls        int
	maxCalls     int
}

func (f *voiceFlags) register(c *cobra.Command, turns int, gap string) {
	d := workload.DefaultVoice()
	fs := c.Flags()
	fs.IntVar(&f.systemTokens, "system-prompt-tokens", d.SystemPromptTokens, "voice: tokens of each call's system prompt (unique per call, shared by its turns)")
	fs.IntVar(&f.userTokens, "user-tokens", d.UserTokens, "voice: tokens of each user message")
	fs.IntVar(&f.turns, "turns", turns, "voice: turns per call; turn 1 only warms the prefix, turns 2.. are measured")
	fs.StringVar(&f.gap, "gap", gap, "voice: time the caller speaks between turns, MIN,MAX drawn uniformly (or one value)")
	fs.IntVar(&f.outputTokens, "output-tokens", d.OutputTokens, "voice: tokens asked of each measured turn (with ignore_eos)")
	if c.Name() == "validate" {
		return // a validation's calls are its own, one after another
	}
	fs.IntVar(&f.calls, "calls", 0, "voice: number of call arrivals in the measured window (instead of "+windowFlag(c)+")")
	fs.IntVar(&f.maxCalls, "max-concurrent-calls", 0, "voice: cap on calls in progress; arrivals beyond it are shed and reported")
}

// windowFlag is the flag that bounds a command's measured window by time:
// a sweep's (and a prediction's) window is per level.
func windowFlag(c *cobra.Command) string {
	if c.Name() == "sweep" || c.Name() == "predict" {
		return "--step-duration"
	}
	if c.Name() == "plan" {
		return "--window"
	}
	return "--duration"
}

// parseGap reads "5s,7s" or "6s".
func parseGap(s string) (time.Duration, time.Duration, error) {
	lo, hi, two := strings.Cut(s, ",")
	a, err := time.ParseDuration(strings.TrimSpace(lo))
	if err != nil {
		return 0, 0, fmt.Errorf("--gap %q: %v", s, err)
	}
	b := a
	if two {
		if b, err = time.ParseDuration(strings.TrimSpace(hi)); err != nil {
			return 0, 0, fmt.Errorf("--gap %q: %v", s, err)
		}
	}
	if a < 0 || b < a {
		return 0, 0, fmt.Errorf("--gap %q: want 0 ≤ MIN ≤ MAX", s)
	}
	return a, b, nil
}

// build returns the workload, validated.
func (f *voiceFlags) build(seed uint64) (workload.Voice, error) {
	lo, hi, err := parseGap(f.gap)
	if err != nil {
		return workload.Voice{}, usageErr("%v", err)
	}
	if f.calls < 0 || f.maxCalls < 0 {
		return workload.Voice{}, usageErr("--calls and --max-concurrent-calls must not be negative")
	}
	v := workload.Voice{SystemPromptTokens: f.systemTokens, UserTokens: f.userTokens, Turns: f.turns,
		GapMin: lo, GapMax: hi, OutputTokens: f.outputTokens, Seed: seed}
	if err := v.Validate(); err != nil {
		return v, usageErr("%v", err)
	}
	return v, nil
}

type validateOptions struct {
	target targetFlags
	voice  voiceFlags
	sim    simFlags
	seed   uint64
}

func newValidateCmd() *cobra.Command {
	o := &validateOptions{}
	c := &cobra.Command{
		Use:   "validate",
		Short: "Check on one call that the server's prefix cache really warms",
		Long: `validate runs one multi-turn call against the target and prints, per turn,
the prompt tokens, the cached tokens and the time to first token. It passes
(exit 0) when turn 2 found at least 90% of the system prompt in the prefix
cache, and otherwise exits 1 with a diagnosis: the server does not report
cached tokens, the hit is too low, or the turns failed.

Run it before spending GPU hours on a sweep.`,
		Example: `  knee validate --base-url http://gpu-box:8000/v1 --model my-model`,
		Args:    cobra.NoArgs,
		RunE:    runtimeErrors(o.run),
	}
	o.target.register(c)
	o.voice.register(c, 2, "1s")
	o.sim.register(c)
	c.Flags().Uint64Var(&o.seed, "seed", 1, "seed of the call's script")
	return c
}

func (o *validateOptions) run(c *cobra.Command, _ []string) error {
	v, err := o.voice.build(o.seed)
	if err != nil {
		return err
	}
	tgt, err := o.target.resolve(c.Context(), c, &o.sim)
	if err != nil {
		return err
	}
	defer tgt.stop()
	client, err := transport.NewClient(tgt.target, 2)
	if err != nil {
		return usageErr("%v", err)
	}
	defer client.Close()
	out := c.OutOrStdout()
	cal := bench.Calibrate(client)
	v.WordsPerToken = cal.WordsPerToken
	v.Nonce = "[" + newRunNonce(c.Context()) + "]"
	where := results.RedactURL(tgt.target.BaseURL)
	if tgt.builtin {
		where = "the built-in simulator (" + where + ")"
	}
	fmt.Fprintf(out, "validating %s · model %s · one call of %d turns, %d-token system prompt\n%s\n",
		where, tgt.target.Model, v.Turns, v.SystemPromptTokens, cal)
	res := bench.CheckPrefixCache(c.Context(), client, v)
	if err := report.Validation(out, res); err != nil {
		return err
	}
	if !res.OK {
		return &exitError{ExitFailed, fmt.Errorf("%s", res.Verdict)}
	}
	return nil
}
