package simulator

import (
	"context"
	"net"
	"time"

	"github.com/kneebench/knee/presets"

	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/model"
	"github.com/kneebench/knee/simulator/server"
	"github.com/kneebench/knee/simulator/telemetry"
)

// The public surface cmd uses: the server's options and configuration,
// and what /metrics/summary returns.
type (
	// Options configures a server (see server.Options).
	Options = server.Options
	// Server is a running simulator (see server.Server).
	Server = server.Server
	// ModelsFile is a parsed models.yml (see server.ModelsFile).
	ModelsFile = server.ModelsFile
	// Summary is the body of GET /metrics/summary.
	Summary = server.Summary
	// ModelSummary is one model's part of it.
	ModelSummary = telemetry.ModelSummary
	// Responder says what is answered (see content.Responder).
	Responder = content.Responder
)

// NewServer builds a server (see server.NewServer).
func NewServer(o Options) (*Server, error) { return server.NewServer(o) }

// ParseModels parses and validates a models file.
func ParseModels(name string, data []byte) (*ModelsFile, error) {
	return server.ParseModels(name, data)
}

// ParseResponses parses and validates a responses file.
func ParseResponses(name string, data []byte) (*Responder, error) {
	return content.ParseResponses(name, data)
}

// PresetModels builds the models file of a preset,
// GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]] (see presets.ParseSpec).
func PresetModels(spec string) (*ModelsFile, error) { return model.ModelsOfPreset(spec) }

// Run serves on addr until ctx ends (see server.Run).
func Run(ctx context.Context, addr string, o Options, grace time.Duration, ready func(net.Addr)) error {
	return server.Run(ctx, addr, o, grace, ready)
}

// RunFleet serves n independent replicas on consecutive ports from port
// (each its own engines, caches and metrics; /metrics/summary names the
// replica) until ctx ends.
func RunFleet(ctx context.Context, host string, port, n int, o Options, grace time.Duration, ready func(int, net.Addr)) error {
	return server.RunFleet(ctx, host, port, n, o, grace, ready)
}

// PresetKV says what a preset's KV cache is: its format and the blocks it
// holds, with what kv=fp8 would hold for fp8 weights on a bf16 cache.
func PresetKV(spec string) (string, error) {
	s, err := presets.ParseSpec(spec)
	if err != nil {
		return "", err
	}
	return server.PresetKV(s), nil
}

// The built-in files and the loading of models and responses files live
// with the models (see model.LoadModels), where the predictor reads them
// without the server.
var (
	LoadModels    = model.LoadModels
	LoadResponses = model.LoadResponses
	ReadSpec      = model.ReadSpec
	Builtin       = model.Builtin
	BuiltinNames  = model.BuiltinNames
)

// BuiltinPrefix marks a built-in file: builtin:NAME.
const BuiltinPrefix = model.BuiltinPrefix
