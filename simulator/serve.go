package simulator

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator/model"
)

// ServeSpec is what knee sim serves and where, as its flags give it: each
// field is the flag of its name, and every error names the flags at fault.
type ServeSpec struct {
	Host, Port string
	Replicas   int
	// Models and Responses are files or builtin:NAME; Preset (with
	// ModelPreset when it names a GPU alone) serves a preset instead of
	// Models.
	Models, Responses   string
	Preset, ModelPreset string
	APIKey              string
	ShutdownGrace       time.Duration
	MaxBodyBytes        int
	// MaxBodyBytesInFlight bounds the request bodies read at once.
	MaxBodyBytesInFlight int
	// ReadyFile, when set, receives the listening address (one per line
	// for replicas) once serving.
	ReadyFile string
	// ProfileDir, when set, is where POST /start_profile's CPU profiles
	// go (as vLLM's VLLM_TORCH_PROFILER_DIR); unset, the route is absent.
	ProfileDir string
	// AllowedMediaHosts are the hosts image URLs are fetched from wherever
	// they point (vLLM's --allowed-media-domains); others only on public
	// addresses.
	AllowedMediaHosts []string
}

// UsageError is an error of a spec's flags (see model.UsageError).
type UsageError = model.UsageError

// usage is an error of the flags.
func usage(format string, a ...any) error { return &UsageError{Err: fmt.Errorf(format, a...)} }

// Check checks the spec's listening address and limits.
func (s ServeSpec) Check() error {
	port, err := strconv.Atoi(s.Port)
	switch {
	case err != nil:
		return usage("--port must be a number, got %q", s.Port)
	case port < 0 || port > 65535:
		return usage("--port %d: a port from 1 to 65535, or 0 for any free one", port)
	case s.Replicas < 1:
		return usage("--replicas must be at least 1")
	case port+s.Replicas-1 > 65535 || s.Replicas > 4096:
		return usage("--replicas %d from --port %s runs past port 65535 (or past 4096 replicas)", s.Replicas, s.Port)
	case s.ShutdownGrace < 0 || s.MaxBodyBytes <= 0 || s.MaxBodyBytesInFlight < s.MaxBodyBytes:
		return usage("--shutdown-grace must not be negative, --max-body-bytes positive and --max-body-bytes-in-flight at least --max-body-bytes")
	}
	return nil
}

// PresetModels is the models file of --preset (with --model-preset), and
// what its KV cache is.
func (s ServeSpec) PresetModels() (*ModelsFile, string, error) {
	spec := s.Preset
	if _, _, combined := presets.SplitCombined(s.Preset); !combined {
		if s.ModelPreset == "" {
			return nil, "", usage("--sim-preset %s needs --model-preset (or use --sim-preset GPU[xN]/MODEL[@DTYPE])", s.Preset)
		}
		spec = s.Preset + "/" + s.ModelPreset
	}
	models, err := PresetModels(spec)
	if err != nil {
		return nil, "", &UsageError{Err: err}
	}
	kv, _ := PresetKV(spec)
	return models, kv, nil
}

// Serve serves the spec until ctx ends, saying on log what it serves and
// where.
func (s ServeSpec) Serve(ctx context.Context, log io.Writer) error {
	if err := s.Check(); err != nil {
		return err
	}
	var models *ModelsFile
	var err error
	if s.Preset != "" {
		var kv string
		if models, kv, err = s.PresetModels(); err != nil {
			return err
		}
		fmt.Fprintf(log, "knee sim: %s: %s\n", s.Preset, kv)
	} else if models, err = LoadModels(ctx, s.Models); err != nil {
		return fmt.Errorf("--sim-models: %w", err)
	}
	responder, err := LoadResponses(ctx, s.Responses)
	if err != nil {
		return err
	}
	opts := Options{Models: models, Responder: responder, APIKey: s.APIKey, MaxBodyBytes: s.MaxBodyBytes, MaxBodyBytesInFlight: s.MaxBodyBytesInFlight, ProfileDir: s.ProfileDir,
		AllowedMediaHosts: s.AllowedMediaHosts}
	if s.Replicas == 1 {
		return Run(ctx, net.JoinHostPort(s.Host, s.Port), opts, s.ShutdownGrace, func(a net.Addr) {
			fmt.Fprintf(log, "knee sim serving %d model(s) on http://%s/v1\n", len(models.Models), a)
			s.ready([]string{a.String()})
		})
	}
	port, _ := strconv.Atoi(s.Port)
	var mu sync.Mutex
	var addrs []string
	return RunFleet(ctx, s.Host, port, s.Replicas, opts, s.ShutdownGrace, func(i int, a net.Addr) {
		fmt.Fprintf(log, "knee sim replica %d of %d serving %d model(s) on http://%s/v1\n", i, s.Replicas, len(models.Models), a)
		mu.Lock()
		defer mu.Unlock()
		if addrs = append(addrs, a.String()); len(addrs) == s.Replicas {
			s.ready(addrs)
		}
	})
}

// ready writes the addresses to the ready file, when there is one.
func (s ServeSpec) ready(addrs []string) {
	if s.ReadyFile == "" {
		return
	}
	text := strings.Join(addrs, "\n")
	if len(addrs) > 1 {
		text += "\n"
	}
	_ = os.WriteFile(s.ReadyFile, []byte(text), 0o644)
}

// Config is a built-in file's text (knee sim --print-config NAME): the
// models file of the spec's preset for "models" when it has one.
func (s ServeSpec) Config(name string) ([]byte, error) {
	if name == "models" && s.Preset != "" {
		models, _, err := s.PresetModels()
		if err != nil {
			return nil, err
		}
		return models.YAML(s.Preset)
	}
	b, err := Builtin(name)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return b, nil
}
