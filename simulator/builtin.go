package simulator

import (
	"embed"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
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

// readSpec reads a path, or a built-in file named builtin:NAME.
func readSpec(spec string) ([]byte, error) {
	if name, ok := strings.CutPrefix(spec, BuiltinPrefix); ok {
		return Builtin(name)
	}
	if st, err := os.Stat(spec); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a file", spec)
	}
	f, err := os.Open(spec)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSpecBytes {
		return nil, fmt.Errorf("%s is larger than %d MiB: not a models or responses file", spec, maxSpecBytes>>20)
	}
	return b, nil
}

// maxSpecBytes bounds a models or responses file.
const maxSpecBytes = 64 << 20

// LoadResponses reads and validates a responses file (a path or
// builtin:NAME).
func LoadResponses(spec string) (*Responder, error) {
	b, err := readSpec(spec)
	if err != nil {
		return nil, err
	}
	return ParseResponses(spec, b)
}

// LoadModels reads and validates a models file (a path or builtin:NAME).
func LoadModels(spec string) (*ModelsFile, error) {
	b, err := readSpec(spec)
	if err != nil {
		return nil, err
	}
	return ParseModels(spec, b)
}
