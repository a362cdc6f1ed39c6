package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/workload"
)

// maxToolsBytes bounds a --tools file: a tool list, not a dataset.
const maxToolsBytes = 4 << 20

// ReadTools reads --tools into ToolList: none when it is empty,
// BuiltinTools for "builtin", else the file it names (ParseTools), read
// within a bound (ctx ends a wait on a FIFO nobody writes). It then
// checks --tool-choice against them: a choice needs tools, and a named
// one must be among them.
func (t *TargetSpec) ReadTools(ctx context.Context) error {
	switch t.Tools {
	case "":
		t.ToolList = nil
	case "builtin":
		t.ToolList = workload.BuiltinTools()
	default:
		b, err := input.Read(ctx, t.Tools, maxToolsBytes, "a file of tool schemas")
		if err != nil {
			return fmt.Errorf("--tools: %w", err)
		}
		if t.ToolList, err = workload.ParseTools(b); err != nil {
			return fmt.Errorf("--tools %s: %w", t.Tools, err)
		}
	}
	c := t.ToolChoice
	switch {
	case c == "":
	case len(t.ToolList) == 0 && !t.ToolsPerRequest:
		return fmt.Errorf("--tool-choice %s needs --tools (builtin, or a file of tool schemas) or a dataset with its own", c)
	case slices.Contains(workload.ToolChoices, c):
	case len(t.ToolList) > 0 && !slices.ContainsFunc(t.ToolList, func(x workload.Tool) bool { return x.Name == c }):
		return fmt.Errorf("--tool-choice %s names no tool of --tools (auto, required, none, or one of its names)", c)
	}
	return nil
}

// checkToolRounds checks --tool-rounds.
func (t TargetSpec) checkToolRounds() error {
	if t.ToolRounds < 0 || t.ToolRounds > 100 {
		return fmt.Errorf("--tool-rounds %d: between 0 and 100", t.ToolRounds)
	}
	return nil
}
