package cmd

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/kneebench/knee/simulator"
	"github.com/spf13/cobra"
)

// simFlags choose what the built-in simulator serves when knee starts it
// because no target was given.
type simFlags struct {
	models    string
	responses string
	preset    string
	// gemmTiles is knee predict's --gemm-tiles.
	gemmTiles bool
}

func (f *simFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.models, "sim-models", "builtin:models", "built-in target: models file it serves")
	f.registerResponses(c)
	markInputs(c, "sim-models")
	fs.StringVar(&f.preset, "sim-preset", "", "built-in target: serve a preset GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]] (see knee presets), e.g. h100-80gbx2/llama-3.1-70b@fp8")
}

// registerResponses declares --sim-responses alone, for knee plan: its
// configurations are presets or --calibrated's, so no models flag of the
// simulator's applies.
func (f *simFlags) registerResponses(c *cobra.Command) {
	c.Flags().StringVar(&f.responses, "sim-responses", "builtin:bench-responses", "built-in target: responses file (builtin:bench-responses makes max_tokens set the output length exactly)")
	markInputs(c, "sim-responses")
}

// executable is the binary started as the simulator; tests point it at a
// built knee.
var executable = os.Executable

// startBuiltinSim starts this binary's simulator as a child process. The
// models and responses files are read and checked here, before it starts:
// a bad one is refused naming its flag, and a FIFO is read once.
func startBuiltinSim(ctx context.Context, c *cobra.Command, f *simFlags) (*simulator.Child, error) {
	exe, err := executable()
	if err != nil {
		return nil, err
	}
	var args []string
	inputs := map[string][]byte{}
	for _, in := range []struct {
		name, flag, spec string
		check            func(string, []byte) error
	}{
		{"models", "--sim-models", f.models, func(n string, b []byte) error { _, err := simulator.ParseModels(n, b); return err }},
		{"responses", "--sim-responses", f.responses, func(n string, b []byte) error { _, err := simulator.ParseResponses(n, b); return err }},
	} {
		if strings.HasPrefix(in.spec, simulator.BuiltinPrefix) {
			args = append(args, "--"+in.name, in.spec)
			continue
		}
		b, err := simulator.ReadSpec(ctx, in.spec)
		if err != nil {
			return nil, withCode(ExitRuntime, fmt.Errorf("%s: %w", in.flag, err))
		}
		if err := in.check(in.spec, b); err != nil {
			return nil, usageErr("%s: %w", in.flag, err)
		}
		inputs[in.name] = b
	}
	if f.preset != "" {
		args = append(args, "--sim-preset", f.preset)
	}
	if is := c.Flags().Lookup("image-serve"); is != nil && is.Value.String() != "" {
		// The run's own image server is the one private address the
		// simulator it starts may fetch from.
		if host, _, err := net.SplitHostPort(is.Value.String()); err == nil {
			args = append(args, "--allowed-media-domains", cmp.Or(host, "127.0.0.1"))
		}
	}
	return simulator.StartChild(ctx, exe, args, inputs, c.ErrOrStderr())
}
