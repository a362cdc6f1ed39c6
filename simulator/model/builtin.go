package model

import (
	"context"
	"embed"
	"fmt"
	"sort"
	"strings"

	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/simulator/content"
)

//go:embed builtin/*.yml
var builtinFiles embed.FS

// BuiltinPrefix marks a built-in file: builtin:NAME.
const BuiltinPrefix = "builtin:"

// BuiltinNames lists the built-in files.
func BuiltinNames() []string {
	entries, _ := builtinFiles.ReadDir("builtin")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yml"))
	}
	sort.Strings(out)
	return out
}

// Builtin returns a built-in file's text.
func Builtin(name string) ([]byte, error) {
	b, err := builtinFiles.ReadFile("builtin/" + name + ".yml")
	if err != nil {
		return nil, fmt.Errorf("no built-in file %q (have %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return b, nil
}

// ReadSpec reads a models or responses file, bounded, or a built-in file
// named builtin:NAME; cancelling ctx ends a wait on a FIFO.
func ReadSpec(ctx context.Context, spec string) ([]byte, error) {
	if name, ok := strings.CutPrefix(spec, BuiltinPrefix); ok {
		return Builtin(name)
	}
	return input.Read(ctx, spec, maxSpecBytes, "a models or responses file")
}

// maxSpecBytes bounds a models or responses file.
const maxSpecBytes = 64 << 20

// LoadResponses reads and validates a responses file (a path or
// builtin:NAME).
func LoadResponses(ctx context.Context, spec string) (*content.Responder, error) {
	b, err := ReadSpec(ctx, spec)
	if err != nil {
		return nil, err
	}
	return content.ParseResponses(spec, b)
}

// LoadModels reads and validates a models file (a path or builtin:NAME);
// cancelling ctx ends a wait on a FIFO.
func LoadModels(ctx context.Context, spec string) (*ModelsFile, error) {
	b, err := ReadSpec(ctx, spec)
	if err != nil {
		return nil, err
	}
	return ParseModels(spec, b)
}

// UsageError is an error of a spec's flags, as opposed to one serving.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }
