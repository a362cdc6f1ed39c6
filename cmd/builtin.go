package cmd

import (
	"context"
	"os"

	"github.com/kneebench/knee/simulator"
	"github.com/spf13/cobra"
)

// simFlags choose what the built-in simulator serves when knee starts it
// because no target was given.
type simFlags struct {
	models    string
	responses string
	preset    string
}

func (f *simFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.models, "sim-models", "builtin:models", "built-in target: models file it serves")
	fs.StringVar(&f.responses, "sim-responses", "builtin:bench-responses", "built-in target: responses file (builtin:bench-responses makes max_tokens set the output length exactly)")
	fs.StringVar(&f.preset, "sim-preset", "", "built-in target: serve a preset GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]] (see knee presets), e.g. h100-80gbx2/llama-3.1-70b@fp8")
}

// executable is the binary started as the simulator; tests point it at a
// built knee.
var executable = os.Executable

// startBuiltinSim starts this binary's simulator as a child process.
func startBuiltinSim(ctx context.Context, c *cobra.Command, f *simFlags) (*simulator.Child, error) {
	exe, err := executable()
	if err != nil {
		return nil, err
	}
	args := []string{"--models", f.models, "--responses", f.responses}
	if f.preset != "" {
		args = append(args, "--preset", f.preset)
	}
	return simulator.StartChild(ctx, exe, args, c.ErrOrStderr())
}
