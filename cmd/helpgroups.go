package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpColumns is the widest line the help prints.
const helpColumns = 100

// helpGroups are the help's groups, in the order it shows them, each
// with its flags; a flag in none is in Tuning. A flag marked * is
// essential: the short --help shows it, --help-all shows every flag.
var helpGroups = []struct {
	name  string
	flags string
}{
	{"Target", "base-url* model* api-key* endpoint* header* extra-body timeout request-timeout idle-conn-timeout retries"},
	{"Load", "load-file* print-load rate* rates* concurrency* duration* requests* warmup* max-concurrency* burstiness ramp-up " +
		"ramp-up-from ramp-up-strategy drain-timeout seed* repeat* trace-speedup trace-speedups num-prompts"},
	{"Workload", "workload* input-tokens* max-tokens* prompt* input-tokens-stddev max-tokens-stddev range-ratio prefix-tokens* " +
		"prefix-pool mix* vary batch-size documents ignore-eos no-calibrate tokenizer chat-template-kwarg system-prompt-tokens"},
	{"Datasets", "dataset* dataset-format dataset-max-context dataset-max-prompt-tokens dataset-min-tokens dataset-repeat " +
		"trace trace-block-tokens history replay-live-history"},
	{"Calls", "calls turns user-tokens output-tokens gap max-concurrent-calls"},
	{"Images", "image-count* image-size image-format image-quality image-pool image-dir image-serve image-url-base"},
	{"Tools and reasoning", "tools* tool-choice tool-rounds tool-result tool-calls reasoning-effort* reasoning-tokens"},
	{"SLO", "slo* goodput* max-error-rate* goodput-share slo-metric slo-percentile health-policy stop-on-saturation* " +
		"min-attainment"},
	{"Output", "output* out-dir* label* records* quiet* json slices-csv slice dashboard* dashboard-host export*"},
	{"Server view", "server-metrics-url* no-server-metrics* gpu-metrics-url reset-cache profile"},
	{"Simulator and models", "sim-preset* sim-models* sim-responses sweep-preset* model-presets* model-preset gpus* tp replicas* routing* " +
		"max-replicas prices calibrated calibrated-only gemm-tiles find-max-rate* disaggregated* kv-link-gbps seeds autoscale vision lora-adapters " +
		"max-loras scheduling-policy schedules-as long-prefill-token-threshold responses port host print-config profile-dir " +
		"max-body-bytes max-body-bytes-in-flight shutdown-grace parallel level-interval"},
	{"Calibration", "holdout fix fit-slots max-evaluations tolerance accept-poor-fit"},
	{"Shards", "shards shard start-at"},
}

// helpGroupOf is each flag's group and whether it is essential.
var helpGroupOf = func() map[string]struct {
	group     string
	essential bool
} {
	out := map[string]struct {
		group     string
		essential bool
	}{}
	for _, g := range helpGroups {
		for _, f := range strings.Fields(g.flags) {
			name, ess := strings.CutSuffix(f, "*")
			out[name] = struct {
				group     string
				essential bool
			}{g.name, ess}
		}
	}
	return out
}()

// groupedMin is how many flags a command has before its help is grouped.
const groupedMin = 25

// helpAllFlag asks for every group of a command's flags.
const helpAllFlag = "--help-all"

// groupedHelp prints a command with many flags as its essential flags
// under named groups (every flag with --help-all); other commands as
// cobra does.
func groupedHelp(def func(*cobra.Command, []string)) func(*cobra.Command, []string) {
	return func(c *cobra.Command, args []string) {
		if c.HasAvailableSubCommands() {
			def(c, args)
			return
		}
		all := c.Root().Annotations[helpAllFlag] != ""
		w := c.OutOrStdout()
		fmt.Fprintln(w, wrapProse(strings.TrimRight(cmpOr(c.Long, c.Short), "\n")))
		fmt.Fprintf(w, "\nUsage:\n  %s\n", c.UseLine())
		if c.Example != "" {
			fmt.Fprintf(w, "\nExamples:\n%s\n", wrapCommands(c.Example))
		}
		if visibleFlags(c) < groupedMin {
			fs := pflag.NewFlagSet("flags", pflag.ContinueOnError)
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden {
					fs.AddFlag(f)
				}
			})
			fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsagesWrapped(helpColumns))
			return
		}
		left := printGroups(w, c, all)
		if left > 0 {
			fmt.Fprintf(w, "\n%d more flags (datasets, calls, images, tuning, shards): %s %s\n", left, c.CommandPath(), helpAllFlag)
		}
	}
}

// wrapProse wraps lines wider than the help at spaces, keeping their
// indentation.
func wrapProse(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		for utf8.RuneCountInString(line) > helpColumns {
			cut := lastSpaceWithin(line, helpColumns)
			if cut <= len(indent) {
				break
			}
			out = append(out, line[:cut])
			line = indent + strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// wrapCommands wraps example command lines wider than the help as a shell
// continues them: a backslash, the rest indented.
func wrapCommands(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for utf8.RuneCountInString(line) > helpColumns {
			cut := lastSpaceWithin(line, helpColumns-2)
			if cut <= 4 {
				break
			}
			out = append(out, line[:cut]+" \\")
			line = "      " + strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// lastSpaceWithin is the byte index of the last space before the n-th
// rune of s (0 when there is none).
func lastSpaceWithin(s string, n int) int {
	cut, runes := 0, 0
	for i, r := range s {
		if runes >= n {
			break
		}
		if r == ' ' {
			cut = i
		}
		runes++
	}
	return cut
}

// printGroups prints the command's flags by group, only the essential
// ones unless all, and returns how many it left out.
func printGroups(w io.Writer, c *cobra.Command, all bool) int {
	byGroup := map[string]*pflag.FlagSet{}
	left := 0
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		g, ok := helpGroupOf[f.Name]
		if !ok {
			g.group = "Tuning"
		}
		if !all && !g.essential {
			left++
			return
		}
		if byGroup[g.group] == nil {
			byGroup[g.group] = pflag.NewFlagSet(g.group, pflag.ContinueOnError)
			byGroup[g.group].SortFlags = false
		}
		byGroup[g.group].AddFlag(f)
	})
	order := make([]string, 0, len(helpGroups)+1)
	for _, g := range helpGroups {
		order = append(order, g.name)
	}
	for _, name := range append(order, "Tuning") {
		if fs := byGroup[name]; fs != nil {
			fmt.Fprintf(w, "\n%s:\n%s", name, fs.FlagUsagesWrapped(helpColumns))
		}
	}
	return left
}

// visibleFlags counts the flags a command's help would list.
func visibleFlags(c *cobra.Command) int {
	n := 0
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			n++
		}
	})
	return n
}

// wantsHelpAll reports whether args ask for every flag group, and
// returns them with --help-all made cobra's --help.
func wantsHelpAll(args []string) ([]string, bool) {
	i := slices.Index(args, helpAllFlag)
	if i < 0 {
		return args, false
	}
	out := slices.Clone(args)
	out[i] = "--help"
	return out, true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// liveOnly are the flags of a live target that a prediction, which sends
// nothing, cannot honour: its commands refuse them and their help leaves
// them out.
var liveOnly = []string{"base-url", "api-key", "header", "timeout", "request-timeout", "retries", "idle-conn-timeout",
	"server-metrics-url", "no-server-metrics", "gpu-metrics-url", "reset-cache", "profile"}

// hideFlags leaves flags out of a command's help (they still parse, for
// the command to refuse them in its own words).
func hideFlags(c *cobra.Command, names []string) {
	for _, n := range names {
		if f := c.Flags().Lookup(n); f != nil {
			f.Hidden = true
		}
	}
}

// refuseLiveOnly refuses a live-only flag given to a command that sends
// nothing.
func refuseLiveOnly(c *cobra.Command) error {
	for _, name := range liveOnly {
		if c.Flags().Changed(name) {
			return usageErr("--%s has no meaning in virtual time, where knee %s sends nothing; leave it out", name, c.Name())
		}
	}
	return nil
}

// aliasFlags keeps a command's older flag names working as the one name
// (old → new): pflag reads the old name as the new, in parsing and in
// Changed alike, and the help lists only the new.
func aliasFlags(c *cobra.Command, old map[string]string) {
	prev := c.Flags().GetNormalizeFunc()
	c.Flags().SetNormalizeFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		if n, ok := old[name]; ok {
			name = n
		}
		return prev(f, name)
	})
}
