package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/workload"
)

// maxToolsBytes bounds a --tools file: a tool list, not a dataset;
// toolsWait how long reading it may take.
const (
	maxToolsBytes = 4 << 20
	toolsWait     = 10 * time.Second
)

// LoadTools is --tools: none when it is empty, BuiltinTools for
// "builtin", else the file it names (ParseTools), read within a bound
// and a few seconds so a FIFO nobody writes cannot hang the run.
func (t TargetSpec) LoadTools() ([]workload.Tool, error) {
	switch t.Tools {
	case "":
		return nil, nil
	case "builtin":
		return workload.BuiltinTools(), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolsWait)
	defer cancel()
	b, err := input.Read(ctx, t.Tools, maxToolsBytes, "--tools")
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("--tools %s: nothing could be read within %v (a pipe nobody writes?)", t.Tools, toolsWait)
	}
	if err != nil {
		return nil, err
	}
	tools, err := workload.ParseTools(b)
	if err != nil {
		return nil, fmt.Errorf("--tools %s: %w", t.Tools, err)
	}
	return tools, nil
}

// checkTools checks --tools and --tool-choice together: a choice needs
// tools, and a named one must be among them.
func (t TargetSpec) checkTools() error {
	tools, err := t.LoadTools()
	if err != nil {
		return err
	}
	if t.ToolRounds < 0 || t.ToolRounds > 100 {
		return fmt.Errorf("--tool-rounds %d: between 0 and 100", t.ToolRounds)
	}
	c := t.ToolChoice
	switch {
	case c == "":
		return nil
	case len(tools) == 0 && !t.ToolsPerRequest:
		return fmt.Errorf("--tool-choice %s needs --tools (builtin, or a file of tool schemas) or a dataset with its own", c)
	case slices.Contains(workload.ToolChoices, c):
		return nil
	case len(tools) > 0 && !slices.ContainsFunc(tools, func(x workload.Tool) bool { return x.Name == c }):
		return fmt.Errorf("--tool-choice %s names no tool of --tools (auto, required, none, or one of its names)", c)
	}
	return nil
}
