package cmd

import (
	"errors"
	"os"
	"runtime/pprof"
	"time"

	"github.com/kneebench/knee/simulator"
	"github.com/spf13/cobra"
)

// simOptions are knee sim's flags: what it serves and where (a
// simulator.ServeSpec), and what it prints instead.
type simOptions struct {
	simulator.ServeSpec
	printConfig string
	cpuProf     string
}

// envOr returns $KNEE_SIM_<name> or def.
func envOr(name, def string) string {
	if v := os.Getenv("KNEE_SIM_" + name); v != "" {
		return v
	}
	return def
}

func newSimCmd() *cobra.Command { return newSimCmdWith(&simOptions{}) }

// newSimCmdWith is knee sim over o (see newRunCmdWith).
func newSimCmdWith(o *simOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "sim",
		Short: "Serve the bundled OpenAI-compatible LLM simulator",
		Long: `sim serves a GPU-free, deterministic stand-in for an OpenAI-compatible LLM
server: /v1/chat/completions, /v1/completions, /v1/models, /health, /metrics
(vLLM-named Prometheus metrics), /metrics/summary and /admin/faults.

Flags override KNEE_SIM_HOST, KNEE_SIM_PORT, KNEE_SIM_MODELS,
KNEE_SIM_RESPONSES and KNEE_SIM_API_KEY.`,
		Example: `  knee sim
  knee sim --port 9000 --sim-models my-models.yml --sim-responses builtin:bench-responses
  knee sim --print-config models > my-models.yml`,
		Args: noArgs,
		RunE: runtimeErrors(o.run),
	}
	fs := c.Flags()
	fs.StringVar(&o.Host, "host", envOr("HOST", "127.0.0.1"), "address to listen on")
	fs.StringVar(&o.Port, "port", envOr("PORT", "8080"), "port to listen on (0 picks a free one)")
	fs.StringVar(&o.Models, "sim-models", envOr("MODELS", "builtin:models"), "models file, or builtin:models")
	fs.StringVar(&o.Responses, "sim-responses", envOr("RESPONSES", "builtin:responses"), "responses file, or builtin:responses / builtin:bench-responses")
	fs.StringVar(&o.APIKey, "api-key", envOr("API_KEY", ""), "require this Bearer token on /v1 and /admin")
	fs.StringVar(&o.printConfig, "print-config", "", "print a built-in file (responses, bench-responses, models) and exit")
	fs.DurationVar(&o.ShutdownGrace, "shutdown-grace", 10*time.Second, "on SIGINT/SIGTERM, time open streams get to finish")
	fs.IntVar(&o.MaxBodyBytes, "max-body-bytes", 32<<20, "largest request body accepted (413 past it)")
	fs.IntVar(&o.MaxBodyBytesInFlight, "max-body-bytes-in-flight", 96<<20, "request bodies read and answered at once, and images being fetched by URL, in bytes (a body costs about 3.5 times its size to decode and count): a body or fetch past it is answered 503 with Retry-After")
	fs.StringVar(&o.Preset, "sim-preset", "", "serve a preset with the scheduler engine: GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]], or a GPU with --model-preset; see knee presets")
	fs.StringVar(&o.ModelPreset, "model-preset", "", "the preset model served on the --sim-preset GPU")
	fs.StringVar(&o.ReadyFile, "ready-file", "", "write the listening address to this file once serving (with --replicas, one per line)")
	fs.IntVar(&o.Replicas, "replicas", 1, "serve this many independent replicas (each its own engines, KV cache, queue and /metrics) on consecutive ports from --port")
	_ = fs.MarkHidden("ready-file")
	fs.StringSliceVar(&o.AllowedMediaHosts, "allowed-media-domains", nil, "hosts (names or addresses, comma-separated) whose image URLs are fetched wherever they point; others are fetched only from public addresses, never loopback, private or link-local ones (as vLLM's flag, and stricter)")
	fs.StringVar(&o.ProfileDir, "profile-dir", "", "serve POST /start_profile and /stop_profile (as vLLM does with VLLM_TORCH_PROFILER_DIR): each writes a CPU profile of the simulator between them to this folder (knee run/sweep --profile calls them around each measured window)")
	fs.StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile of the simulator to this file (for go tool pprof)")
	_ = fs.MarkHidden("cpuprofile")
	markInputs(c, "sim-models", "sim-responses")
	// The names knee sim had before one name served every command.
	aliasFlags(c, map[string]string{"models": "sim-models", "responses": "sim-responses", "preset": "sim-preset"})
	markOutputs(c, "ready-file", "cpuprofile", "profile-dir")
	return c
}

func (o *simOptions) run(c *cobra.Command, _ []string) error {
	var err error
	if o.printConfig != "" {
		var b []byte
		if b, err = o.Config(o.printConfig); err == nil {
			_, err = c.OutOrStdout().Write(b)
		}
	} else {
		if o.cpuProf != "" {
			stop, err := startCPUProfile(o.cpuProf)
			if err != nil {
				return err
			}
			defer stop()
		}
		err = o.Serve(c.Context(), c.ErrOrStderr())
	}
	if errors.As(err, new(*simulator.UsageError)) {
		return usage(err)
	}
	return err
}

// startCPUProfile writes a CPU profile to path until stopped.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
