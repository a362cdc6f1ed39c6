package cmd

import (
	"context"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// fileWords are what a flag's help says when its value names a file.
var fileWords = regexp.MustCompile(`(?i)\b(files?|folders?|tokenizer\.json|pprof)\b`)

// notFiles are flags whose help mentions files though their value names
// none, each with the reason.
var notFiles = map[string]string{
	"calibrate --model":           "a model's name in the models file",
	"plan --label":                "the name the result files get, inside --out-dir",
	"predict --label":             "the name the result files get, inside --out-dir",
	"sweep --label":               "the name the result files get, inside --out-dir",
	"k8s job --inputs-configmap":  "a ConfigMap's name, read by the pods",
	"k8s sim --inputs-configmap":  "a ConfigMap's name, read by the pods",
	"sim --print-config":          "the name of a built-in file",
	"calibrate --accept-poor-fit": "a switch: whether the models file is written",
	"run --print-load":            "a switch: print the load file of the command line",
	"sweep --print-load":          "a switch: print the load file of the command line",
	"predict --print-load":        "a switch: print the load file of the command line",
	"plan --print-load":           "a switch: print the load file of the command line",
	"merge --repeats":             "a switch: how the files given as arguments (each read bounded, as a shard's) are joined",
	// A folder: the dataset's images in it are checked one by one (a
	// regular file, bounded; TestImageDataset holds a FIFO and /dev/zero).
	"run --image-dir":     "a folder of images, each checked",
	"sweep --image-dir":   "a folder of images, each checked",
	"predict --image-dir": "a folder of images, each checked",
	"plan --image-dir":    "a folder of images, each checked",
}

// fileFlag is one flag that names a file, by command.
type fileFlag struct {
	cmd, flag string
	input     bool
}

// fileFlags walks the command tree for the flags marked as naming files,
// and fails for any flag whose help says it names a file but which is
// marked neither way (nor listed in notFiles).
func fileFlags(t *testing.T) []fileFlag {
	t.Helper()
	var out []fileFlag
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "knee ")
		c.Flags().VisitAll(func(f *pflag.Flag) {
			key := path + " --" + f.Name
			_, in := f.Annotations[inputMark]
			_, outMark := f.Annotations[outputMark]
			switch {
			case in || outMark:
				out = append(out, fileFlag{path, f.Name, in})
			case fileWords.MatchString(f.Usage) && notFiles[key] == "":
				t.Errorf("%s names a file (%q) but is marked neither input nor output: mark it (markInputs/markOutputs) or list it in notFiles with the reason", key, f.Usage)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(NewRoot())
	return out
}

// inputCases are the arguments that take each command to the read of a
// file given by flag (FILE stands for it), and the commands' file
// arguments.
var inputCases = map[string][]string{
	"run --dataset":             {"run", "--dataset", "FILE"},
	"sweep --dataset":           {"sweep", "--dataset", "FILE"},
	"predict --dataset":         {"predict", "--dataset", "FILE"},
	"plan --dataset":            {"plan", "--rate", "2", "--window", "1m", "--dataset", "FILE"},
	"run --tokenizer":           {"run", "--input-tokens", "8", "--tokenizer", "FILE"},
	"sweep --tokenizer":         {"sweep", "--input-tokens", "8", "--tokenizer", "FILE"},
	"predict --tokenizer":       {"predict", "--input-tokens", "8", "--tokenizer", "FILE"},
	"plan --tokenizer":          {"plan", "--rate", "2", "--window", "1m", "--input-tokens", "8", "--tokenizer", "FILE"},
	"run --sim-models":          {"run", "--sim-models", "FILE"},
	"sweep --sim-models":        {"sweep", "--sim-models", "FILE"},
	"predict --sim-models":      {"predict", "--sim-models", "FILE"},
	"validate --sim-models":     {"validate", "--sim-models", "FILE"},
	"calibrate --sim-models":    {"calibrate", "../report/testdata/pages/a100.json", "--sim-models", "FILE"},
	"run --sim-responses":       {"run", "--sim-responses", "FILE"},
	"sweep --sim-responses":     {"sweep", "--sim-responses", "FILE"},
	"predict --sim-responses":   {"predict", "--sim-responses", "FILE"},
	"plan --sim-responses":      {"plan", "--rate", "2", "--window", "1m", "--sim-responses", "FILE"},
	"validate --sim-responses":  {"validate", "--sim-responses", "FILE"},
	"calibrate --sim-responses": {"calibrate", "../report/testdata/pages/a100.json", "--sim-responses", "FILE"},
	"sim --sim-models":          {"sim", "--port", "0", "--sim-models", "FILE"},
	"run --load-file":           {"run", "--load-file", "FILE"},
	"sweep --load-file":         {"sweep", "--load-file", "FILE"},
	"predict --load-file":       {"predict", "--load-file", "FILE"},
	"plan --load-file":          {"plan", "--load-file", "FILE"},
	"sim --sim-responses":       {"sim", "--port", "0", "--sim-responses", "FILE"},
	"plan --prices":             {"plan", "--rate", "2", "--window", "1m", "--prices", "FILE"},
	"plan --trace":              {"plan", "--window", "1m", "--trace", "FILE"},
	"run --tools":               {"run", "--tools", "FILE"},
	"run --mix":                 {"run", "--mix", "FILE"},
	"sweep --mix":               {"sweep", "--mix", "FILE"},
	"predict --mix":             {"predict", "--mix", "FILE"},
	"plan --mix":                {"plan", "--rate", "2", "--window", "1m", "--mix", "FILE"},
	"sweep --tools":             {"sweep", "--tools", "FILE"},
	"predict --tools":           {"predict", "--tools", "FILE"},
	"plan --tools":              {"plan", "--rate", "2", "--window", "1m", "--tools", "FILE"},
	"validate --tools":          {"validate", "--tools", "FILE"},
	"plan --calibrated":         {"plan", "--rate", "2", "--window", "1m", "--calibrated", "FILE"},
	"report --records":          {"report", "../report/testdata/pages/run.json", "--records", "FILE", "-o", "OUT"},
	"report FILE":               {"report", "FILE", "-o", "OUT"},
	"merge FILE":                {"merge", "FILE", "-o", "OUT"},
	"compare FILE":              {"compare", "FILE", "../report/testdata/pages/a100.json", "-o", "OUT"},
	"calibrate FILE":            {"calibrate", "FILE", "-o", "OUT"},
}

// TestEveryInputIsBounded: every flag that names a file is marked, every
// input has a case here (so a new one cannot slip by), and each, given
// /dev/zero, is refused at once (exit 3, too large; or 2, not what the
// flag takes, when its first bytes say so) with a message naming the
// file, not read until memory runs out; given a FIFO whose writer never
// comes, one signal ends the wait (exit 130) instead of a hang; given a
// file that is not there, exit 3 (the machine's files, not the flags)
// with a message naming the file and the flag.
func TestEveryInputIsBounded(t *testing.T) {
	var missing []string
	for _, f := range fileFlags(t) {
		if _, ok := inputCases[f.cmd+" --"+f.flag]; f.input && !ok {
			missing = append(missing, f.cmd+" --"+f.flag)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("inputs without a case in inputCases: %s", strings.Join(missing, ", "))
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	names := make([]string, 0, len(inputCases))
	for name := range inputCases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			args := func(file string) []string {
				a := append([]string(nil), inputCases[name]...)
				for i := range a {
					switch a[i] {
					case "FILE":
						a[i] = file
					case "OUT":
						a[i] = filepath.Join(t.TempDir(), "out")
					}
				}
				return a
			}
			missing := filepath.Join(t.TempDir(), "missing")
			code, _, stderr := boundedRun(t, context.Background(), args(missing))
			_, flag, isFlag := strings.Cut(name, " --")
			if code != ExitRuntime || !strings.Contains(stderr, missing) || isFlag && !strings.Contains(stderr, "--"+flag) {
				t.Errorf("a missing file: exit %d, want %d with a message naming it and its flag:\n%s", code, ExitRuntime, stderr)
			}
			code, _, stderr = boundedRun(t, context.Background(), args("/dev/zero"))
			if (code != ExitRuntime && code != ExitUsage) || !strings.Contains(stderr, "/dev/zero") || strings.Contains(stderr, "goroutine") {
				t.Errorf("/dev/zero: exit %d, want %d or %d with a message naming it:\n%s", code, ExitRuntime, ExitUsage, stderr)
			}
			// The signal must come once the command waits on the FIFO: on a
			// busy host it may still be reading an input before it, and a
			// signal then is that input's (the message names it). Then it
			// is sent again, later, rather than the assertion weakened.
			for delay := 300 * time.Millisecond; ; delay *= 2 {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(delay, cancel)
				code, _, stderr = boundedRun(t, ctx, args(fifo))
				cancel()
				early := code == ExitInterrupted && !strings.Contains(stderr, fifo) && strings.Contains(stderr, "interrupted while waiting for an input")
				if !early || delay >= 10*time.Second {
					break
				}
				t.Logf("the signal after %v came before the FIFO was reached (%s): again, later", delay, strings.TrimSpace(stderr))
			}
			if code != ExitInterrupted || !strings.Contains(stderr, fifo) {
				t.Errorf("a FIFO without a writer, then a signal: exit %d, want %d with a message naming it:\n%s", code, ExitInterrupted, stderr)
			}
		})
	}
}

// boundedRun runs knee with args and fails, rather than hang the suite,
// if it does not return within a minute.
func boundedRun(t *testing.T, ctx context.Context, args []string) (int, string, string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, err := executeCtx(t, ctx, args...)
		done <- result{code, out, err}
	}()
	select {
	case r := <-done:
		return r.code, r.stdout, r.stderr
	case <-time.After(time.Minute):
		t.Fatalf("knee %s did not return within a minute", strings.Join(args, " "))
		return 0, "", ""
	}
}

// TestFileArgumentsSaidPlainly: a command given the wrong number of files
// says what it needs in its own words and shows its first example, where
// cobra said "requires at least 1 arg(s), only received 0".
func TestFileArgumentsSaidPlainly(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "report needs one or more result files, got 0 files; e.g. knee report "},
		{[]string{"merge"}, "merge needs the result files of a load's shards"},
		{[]string{"compare"}, "compare needs one or more sweep or run files"},
		{[]string{"calibrate", "a.json", "b.json"}, "calibrate needs one measured run or sweep file, got 2 files"},
	} {
		code, _, errOut := execute(t, tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("knee %v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
