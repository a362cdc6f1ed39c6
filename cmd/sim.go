package cmd

import (
	"fmt"
	"net"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator"
	"github.com/spf13/cobra"
)

type simOptions struct {
	host, port    string
	replicas      int
	models        string
	responses     string
	apiKey        string
	printConfig   string
	shutdownGrace time.Duration
	maxBody       int
	readyFile     string
	preset        string
	// kv says what the preset's KV cache is, once it is built.
	kv          string
	modelPreset string
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
  knee sim --port 9000 --models my-models.yml --responses builtin:bench-responses
  knee sim --print-config models > my-models.yml`,
		Args: cobra.NoArgs,
		RunE: runtimeErrors(o.run),
	}
	fs := c.Flags()
	fs.StringVar(&o.host, "host", envOr("HOST", "127.0.0.1"), "address to listen on")
	fs.StringVar(&o.port, "port", envOr("PORT", "8080"), "port to listen on (0 picks a free one)")
	fs.StringVar(&o.models, "models", envOr("MODELS", "builtin:models"), "models file, or builtin:models")
	fs.StringVar(&o.responses, "responses", envOr("RESPONSES", "builtin:responses"), "responses file, or builtin:responses / builtin:bench-responses")
	fs.StringVar(&o.apiKey, "api-key", envOr("API_KEY", ""), "require this Bearer token on /v1 and /admin")
	fs.StringVar(&o.printConfig, "print-config", "", "print a built-in file (responses, bench-responses, models) and exit")
	fs.DurationVar(&o.shutdownGrace, "shutdown-grace", 10*time.Second, "on SIGINT/SIGTERM, time open streams get to finish")
	fs.IntVar(&o.maxBody, "max-body-bytes", 32<<20, "largest request body accepted")
	fs.StringVar(&o.preset, "preset", "", "serve a preset with the scheduler engine: GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]], or a GPU with --model-preset; see knee presets")
	fs.StringVar(&o.modelPreset, "model-preset", "", "the preset model served on the --preset GPU")
	fs.StringVar(&o.readyFile, "ready-file", "", "write the listening address to this file once serving (with --replicas, one per line)")
	fs.IntVar(&o.replicas, "replicas", 1, "serve this many independent replicas (each its own engines, KV cache, queue and /metrics) on consecutive ports from --port")
	_ = fs.MarkHidden("ready-file")
	fs.StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile of the simulator to this file (for go tool pprof)")
	_ = fs.MarkHidden("cpuprofile")
	return c
}

func (o *simOptions) run(c *cobra.Command, _ []string) error {
	out := c.OutOrStdout()
	if o.printConfig == "models" && o.preset != "" {
		models, err := o.presetModels()
		if err != nil {
			return err
		}
		b, err := models.YAML(o.preset)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	if o.printConfig != "" {
		b, err := simulator.Builtin(o.printConfig)
		if err != nil {
			return usageErr("%v", err)
		}
		_, err = out.Write(b)
		return err
	}
	if _, err := strconv.Atoi(o.port); err != nil {
		return usageErr("--port must be a number, got %q", o.port)
	}
	if o.replicas < 1 {
		return usageErr("--replicas must be at least 1")
	}
	if port, _ := strconv.Atoi(o.port); port+o.replicas-1 > 65535 || o.replicas > 4096 {
		return usageErr("--replicas %d from --port %s runs past port 65535 (or past 4096 replicas)", o.replicas, o.port)
	}
	if o.shutdownGrace < 0 || o.maxBody <= 0 {
		return usageErr("--shutdown-grace must not be negative and --max-body-bytes must be positive")
	}
	var models *simulator.ModelsFile
	var err error
	if o.preset != "" {
		if models, err = o.presetModels(); err != nil {
			return err
		}
		fmt.Fprintf(c.ErrOrStderr(), "knee sim: %s: %s\n", o.preset, o.kv)
	} else if models, err = simulator.LoadModels(o.models); err != nil {
		return err
	}
	responder, err := simulator.LoadResponses(o.responses)
	if err != nil {
		return err
	}
	if o.cpuProf != "" {
		f, err := os.Create(o.cpuProf)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	opts := simulator.Options{Models: models, Responder: responder, APIKey: o.apiKey, MaxBodyBytes: o.maxBody}
	if o.replicas > 1 {
		port, _ := strconv.Atoi(o.port)
		var mu sync.Mutex
		var addrs []string
		return simulator.RunFleet(c.Context(), o.host, port, o.replicas, opts, o.shutdownGrace, func(i int, a net.Addr) {
			fmt.Fprintf(c.ErrOrStderr(), "knee sim replica %d of %d serving %d model(s) on http://%s/v1\n", i, o.replicas, len(models.Models), a)
			mu.Lock()
			defer mu.Unlock()
			if addrs = append(addrs, a.String()); o.readyFile != "" && len(addrs) == o.replicas {
				_ = os.WriteFile(o.readyFile, []byte(strings.Join(addrs, "\n")+"\n"), 0o644)
			}
		})
	}
	addr := net.JoinHostPort(o.host, o.port)
	return simulator.Run(c.Context(), addr, simulator.Options{
		Models: models, Responder: responder, APIKey: o.apiKey, MaxBodyBytes: o.maxBody,
	}, o.shutdownGrace, func(a net.Addr) {
		fmt.Fprintf(c.ErrOrStderr(), "knee sim serving %d model(s) on http://%s/v1\n", len(models.Models), a)
		if o.readyFile != "" {
			_ = os.WriteFile(o.readyFile, []byte(a.String()), 0o644)
		}
	})
}

// presetModels builds the models file of --preset (and --model-preset).
func (o *simOptions) presetModels() (*simulator.ModelsFile, error) {
	spec := o.preset
	if _, _, combined := presets.SplitCombined(o.preset); !combined {
		if o.modelPreset == "" {
			return nil, usageErr("--preset %s needs --model-preset (or use --preset GPU[xN]/MODEL[@DTYPE])", o.preset)
		}
		spec = o.preset + "/" + o.modelPreset
	}
	models, err := simulator.PresetModels(spec)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	o.kv, _ = simulator.PresetKV(spec)
	return models, nil
}
