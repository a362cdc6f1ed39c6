// Package cmd holds knee's cobra commands. Each command parses its flags,
// builds options, calls a package that does the work, and prints; there is
// no measurement logic here.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/kneebench/knee/results/input"

	"github.com/spf13/pflag"

	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// Version is knee's version, set at build time with
// -ldflags "-X github.com/kneebench/knee/cmd.Version=v1.2.3".
var Version = ""

// version returns the build's version: the linker-set one, else the module
// version, else "dev".
func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Exit codes.
const (
	ExitOK      = 0
	ExitFailed  = 1 // the run ran, but every request failed (or a check failed)
	ExitUsage   = 2 // bad flags or arguments
	ExitRuntime = 3 // could not run at all (e.g. unreadable file, target down)
	// ExitMismatch: knee compare --gate could not judge: the two files
	// measured different things, a level failed or its client was
	// unhealthy, or the repeats cannot tell a move from noise. Distinct
	// from a regression (1): more repeats or a healthier host decide it.
	ExitMismatch = 4
	// ExitInterrupted is the status of a run, sweep or validate stopped by
	// a signal, after it wrote what it measured (128 + SIGINT, as shells
	// report it), so scripts can tell an interrupted sweep from a whole one.
	ExitInterrupted = 130
)

// exitError attaches an exit code to an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{ExitUsage, fmt.Errorf(format, a...)}
}

// usage is err as a usage error (exit 2), nil for nil.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{ExitUsage, err}
}

// runtimeErrors wraps a RunE so that any error it returns without an exit
// code is a runtime failure (exit 3); errors that reach Execute without a
// code come from cobra's own argument checks and are usage errors.
func runtimeErrors(f func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		return withCode(ExitRuntime, f(c, args))
	}
}

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code, err}
}

// NewRoot builds the command tree. Tests build a fresh one per case.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "knee",
		Short: "Find where an LLM serving box breaks",
		Long: `knee drives an OpenAI-compatible endpoint (vLLM, SGLang, or its own
simulator) with closed-loop, open-loop and multi-turn call workloads, measures
every latency from the scheduled arrival, checks its own health, and finds the
knee of the latency-vs-load curve.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{ExitUsage, flagHint(c, err)}
	})
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return finiteFlags(c) }
	root.SetHelpFunc(groupedHelp(root.HelpFunc()))
	root.AddCommand(newVersionCmd(), newRunCmd(), newSweepCmd(), newPredictCmd(), newPlanCmd(), newCalibrateCmd(), newMergeCmd(), newK8sCmd(), newCompareCmd(), newReportCmd(), newValidateCmd(), newSimCmd(), newPresetsCmd())
	return root
}

// Execute runs knee with args and returns the process exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRoot()
	if all, ok := wantsHelpAll(args); ok {
		args = all
		root.Annotations = map[string]string{helpAllFlag: "1"}
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ran, err := executeGuarded(ctx, root)
	// The simulator's normal way to stop is a signal; everything else that
	// a signal cut short says so in its status, after writing.
	interrupted := ctx.Err() != nil && ran != nil && ran.Name() != "sim"
	if errors.Is(err, errPrinted) {
		return ExitOK
	}
	if err == nil {
		if interrupted {
			return ExitInterrupted
		}
		return ExitOK
	}
	fmt.Fprintf(stderr, "knee: %s\n", message(err))
	var ee *exitError
	if errors.As(err, &ee) {
		if interrupted && (ee.code == ExitFailed || errors.Is(err, results.ErrInterrupted)) {
			return ExitInterrupted
		}
		if ctx.Err() != nil && errors.Is(err, input.ErrInterrupted) {
			// A wait on an input (a FIFO) ended by the signal, even knee sim's.
			return ExitInterrupted
		}
		if errors.Is(err, input.ErrTooLarge) || errors.Is(err, input.ErrUnreadable) {
			// An input that cannot be read is not a mistake in the flags.
			return ExitRuntime
		}
		return ee.code
	}
	// cobra's own argument and command errors are usage errors.
	return ExitUsage
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print knee's version",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(c.OutOrStdout(), "knee %s (%s, %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

// environment describes this machine for result files.
func environment() results.Environment { return results.NewEnvironment(version()) }

// executeGuarded runs the command tree and turns a panic that escaped
// every check into a one-line error (exit 3) instead of a stack trace.
func executeGuarded(ctx context.Context, root *cobra.Command) (ran *cobra.Command, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = withCode(ExitRuntime, fmt.Errorf("internal error (please report it): %v", r))
		}
	}()
	return root.ExecuteContextC(ctx)
}

// finiteFlags refuses NaN and infinite values in every number flag a
// command was given, before anything runs: they pass comparisons that
// bound them, and a result holding one cannot be written.
func finiteFlags(c *cobra.Command) error {
	var bad error
	c.Flags().Visit(func(f *pflag.Flag) {
		if bad != nil {
			return
		}
		switch f.Value.Type() {
		case "float64", "float32":
			if v, err := strconv.ParseFloat(f.Value.String(), 64); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				bad = usageErr("--%s %s is not a finite number", f.Name, f.Value.String())
			}
		}
	})
	return bad
}
