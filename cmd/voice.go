package cmd

import (
	"fmt"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/live"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/workload"
	"github.com/spf13/cobra"
)

// registerVoice declares the knobs of the multi-turn call workload, with
// the command's default turns and gap.
func registerVoice(c *cobra.Command, v *bench.VoiceSpec, turns int, gap string) {
	d := workload.DefaultVoice()
	fs := c.Flags()
	fs.IntVar(&v.SystemTokens, "system-prompt-tokens", d.SystemPromptTokens, "voice: tokens of each call's system prompt (unique per call, shared by its turns)")
	fs.IntVar(&v.UserTokens, "user-tokens", d.UserTokens, "voice: tokens of each user message")
	fs.IntVar(&v.Turns, "turns", turns, "voice: turns per call; turn 1 only warms the prefix, turns 2.. are measured")
	fs.StringVar(&v.Gap, "gap", gap, "voice: time the caller speaks between turns, MIN,MAX drawn uniformly (or one value)")
	fs.IntVar(&v.OutputTokens, "output-tokens", d.OutputTokens, "voice: tokens asked of each measured turn (with ignore_eos)")
	if c.Name() == "validate" {
		return // a validation's calls are its own, one after another
	}
	fs.IntVar(&v.Calls, "calls", 0, "voice: number of call arrivals in the measured window (instead of "+windowFlag(c)+")")
	fs.IntVar(&v.MaxCalls, "max-concurrent-calls", 0, "voice: cap on calls in progress; arrivals beyond it are shed and reported")
}

// windowFlag is the flag that bounds a command's measured window by time,
// one name on every command.
func windowFlag(*cobra.Command) string { return "--duration" }

// windowKind is what that window is: a run's ("run"), each level's of a
// sweep or a prediction ("level"), or each prediction's of a plan
// ("plan").
func windowKind(c *cobra.Command) string {
	switch c.Name() {
	case "sweep", "predict":
		return "level"
	case "plan":
		return "plan"
	}
	return "run"
}

type validateOptions struct {
	target targetFlags
	voice  bench.VoiceSpec
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
		Args:    noArgs,
		RunE:    runtimeErrors(o.run),
	}
	o.target.register(c)
	registerVoice(c, &o.voice, 2, "1s")
	o.sim.register(c)
	c.Flags().Uint64Var(&o.seed, "seed", 1, "seed of the call's script")
	return c
}

func (o *validateOptions) run(c *cobra.Command, _ []string) error {
	v, err := o.voice.Build(o.seed)
	if err != nil {
		return usageErr("%w", err)
	}
	tgt, err := o.target.resolve(c.Context(), c, &o.sim)
	if err != nil {
		return err
	}
	defer tgt.stop()
	if err := usage(tgt.FitsContext((&bench.Spec{Workload: "voice", Voice: o.voice}).Longest())); err != nil {
		return err
	}
	client, err := transport.NewClient(tgt.Target, 2)
	if err != nil {
		return usageErr("%w", err)
	}
	defer client.Close()
	out := c.OutOrStdout()
	cal := bench.Calibrate(client)
	v.WordsPerToken = cal.WordsPerToken
	v.Nonce = "[" + bench.Nonce(c.Context()) + "]"
	report.Wrapf(out, 6, "validating %s · model %s · one call of %d turns, %d-token system prompt\n%s\n",
		tgt.where(), tgt.Target.Model, v.Turns, v.SystemPromptTokens, cal)
	res := live.CheckPrefixCache(c.Context(), client, v)
	if err := report.Validation(out, res); err != nil {
		return err
	}
	if !res.OK {
		return &exitError{ExitFailed, fmt.Errorf("%s", res.Verdict)}
	}
	return nil
}
