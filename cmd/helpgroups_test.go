package cmd

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpOf is a command's help as a person asks for it: --help, or
// --help-all for every group.
func helpOf(t *testing.T, path []string, flag string) string {
	t.Helper()
	var out strings.Builder
	if code := Execute(context.Background(), append(append([]string{}, path...), flag), &out, io.Discard); code != 0 {
		t.Fatalf("%v %s: exit %d", path, flag, code)
	}
	return out.String()
}

var helpFlagLine = regexp.MustCompile(`^\s+(?:-., )?--([a-z0-9-]+)`)

// TestHelpAPersonCanHold: the big commands' --help shows at most 40
// flags, grouped; --help-all shows every flag the command lists; no help
// line of any command is wider than 100 columns; every flag of the big
// commands has a named group.
func TestHelpAPersonCanHold(t *testing.T) {
	t.Parallel()
	root := NewRoot()
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
		for _, flag := range []string{"--help", helpAllFlag} {
			for i, line := range strings.Split(helpOf(t, path, flag), "\n") {
				if n := utf8.RuneCountInString(line); n > helpColumns {
					t.Errorf("knee %s %s, line %d: %d columns: %s", strings.Join(path, " "), flag, i+1, n, line)
				}
			}
		}
	}
	walk(root, nil)
	for _, name := range []string{"run", "sweep", "predict", "plan"} {
		short, all := flagsIn(helpOf(t, []string{name}, "--help")), flagsIn(helpOf(t, []string{name}, helpAllFlag))
		if len(short) > 40 || len(short) < 10 {
			t.Errorf("knee %s --help lists %d flags, want 10 to 40", name, len(short))
		}
		c, _, _ := root.Find([]string{name})
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			if !all[f.Name] {
				t.Errorf("knee %s %s does not list --%s", name, helpAllFlag, f.Name)
			}
			if _, ok := helpGroupOf[f.Name]; !ok {
				t.Errorf("knee %s: --%s is in no group", name, f.Name)
			}
		})
	}
}

func flagsIn(help string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(help, "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			out[m[1]] = true
		}
	}
	return out
}

// TestLiveOnlyFlagsRefused: a prediction refuses a live target's flags
// in its own words, and its help leaves them out.
func TestLiveOnlyFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"predict", "plan"} {
		code, _, errOut := execute(t, name, "--rate", "5", "--api-key", "x")
		if name == "predict" {
			code, _, errOut = execute(t, name, "--rates", "5", "--api-key", "x")
		}
		if code != ExitUsage || !strings.Contains(errOut, "--api-key has no meaning in virtual time") {
			t.Errorf("knee %s --api-key: exit %d, %s", name, code, errOut)
		}
		if flagsIn(helpOf(t, []string{name}, helpAllFlag))["api-key"] {
			t.Errorf("knee %s %s lists --api-key", name, helpAllFlag)
		}
	}
}

// TestOneNameForTheWindow: --duration is the measured window on run,
// sweep, predict and plan; a sweep's --step-duration and a plan's
// --window still work as it, unlisted.
func TestOneNameForTheWindow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd, old string
	}{{"run", ""}, {"sweep", "step-duration"}, {"predict", "step-duration"}, {"plan", "window"}} {
		root := NewRoot()
		c, _, _ := root.Find([]string{tc.cmd})
		if c.Flags().Lookup("duration") == nil || !flagsIn(helpOf(t, []string{tc.cmd}, "--help"))["duration"] {
			t.Errorf("knee %s has no --duration in its help", tc.cmd)
		}
		if tc.old == "" {
			continue
		}
		if err := c.Flags().Parse([]string{"--" + tc.old, "7m"}); err != nil {
			t.Fatalf("knee %s --%s: %v", tc.cmd, tc.old, err)
		}
		if v := c.Flags().Lookup("duration").Value.String(); v != "7m0s" || !c.Flags().Changed("duration") {
			t.Errorf("knee %s --%s 7m set --duration to %s", tc.cmd, tc.old, v)
		}
		if flagsIn(helpOf(t, []string{tc.cmd}, helpAllFlag))[tc.old] {
			t.Errorf("knee %s lists --%s beside --duration", tc.cmd, tc.old)
		}
	}
}

// TestOneNameForTheSimulator: the models file, the preset and the
// responses file have one name on every command (sim-models, sim-preset,
// sim-responses), a sweep preset and a plan's model presets their own;
// the older names still read as them.
func TestOneNameForTheSimulator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd, old, name string
	}{
		{"sim", "models", "sim-models"}, {"sim", "preset", "sim-preset"}, {"sim", "responses", "sim-responses"},
		{"sweep", "preset", "sweep-preset"}, {"predict", "preset", "sweep-preset"}, {"plan", "models", "model-presets"},
	} {
		c, _, _ := NewRoot().Find([]string{tc.cmd})
		if err := c.Flags().Parse([]string{"--" + tc.old, "x"}); err != nil {
			t.Fatalf("knee %s --%s: %v", tc.cmd, tc.old, err)
		}
		if f := c.Flags().Lookup(tc.name); f == nil || f.Value.String() != "x" {
			t.Errorf("knee %s --%s x did not set --%s", tc.cmd, tc.old, tc.name)
		}
	}
	for _, name := range []string{"run", "sweep", "predict", "calibrate", "sim"} {
		all := flagsIn(helpOf(t, []string{name}, helpAllFlag))
		if !all["sim-models"] || all["models"] {
			t.Errorf("knee %s: the models file is not --sim-models alone", name)
		}
	}
}

// TestCountedLevelsTakeAZeroWindow: a sweep's levels counted by requests
// take a window of 0, under either name (the prediction battery's
// "counted" question), while a run's --duration 0 alone measures nothing.
func TestCountedLevelsTakeAZeroWindow(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"--duration", "--step-duration"} {
		dir := t.TempDir()
		if code, out, errOut := execute(t, "predict", "--rates", "2", "--requests", "20", name, "0", "--input-tokens", "64", "--out-dir", dir, "--label", "c"); code != 0 {
			t.Errorf("predict %s 0 --requests 20: exit %d\n%s\n%s", name, code, out, errOut)
		}
	}
	if code, _, errOut := execute(t, "run", "--duration", "0"); code != ExitUsage || !strings.Contains(errOut, "--duration 0 measures nothing") {
		t.Errorf("run --duration 0: exit %d, %s", code, errOut)
	}
}
