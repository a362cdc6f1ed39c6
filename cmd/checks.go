package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// checkIO checks a command's outputs against each other and its inputs
// (results.CheckIO) before anything is measured.
func checkIO(outputs, inputs map[string]string) error {
	err := results.CheckIO(outputs, inputs)
	if errors.As(err, new(*results.SameFileError)) {
		return usageErr("%w", err)
	}
	return withCode(ExitRuntime, err)
}

// openRecords opens --records (results.OpenRecords).
func openRecords(c *cobra.Command, path string) (*results.CheckedWriter, error) {
	w, err := results.OpenRecords(c.Context(), path, c.OutOrStdout())
	return w, withCode(ExitRuntime, err)
}

// argInputs names a command's file arguments as its inputs.
func argInputs(args []string) map[string]string {
	in := map[string]string{}
	for i, a := range args {
		in[fmt.Sprintf("input %d (%s)", i+1, a)] = a
	}
	return in
}

// readInputs reads a command's result-file arguments (results.ReadInputs).
func readInputs(c *cobra.Command, paths []string) ([][]byte, error) {
	files, err := results.ReadInputs(c.Context(), paths)
	return files, withCode(ExitRuntime, err)
}

// keepsOld reports whether an interrupted run that measured nothing would
// replace an existing file: the file is then kept (a Ctrl-C 0.3 s in once
// replaced yesterday's result with an empty one).
func keepsOld(path string, res *results.Run) bool {
	return res.Interrupted && res.Requests.OK+res.Requests.Failed == 0 && results.HoldsResult(path)
}

// needFiles is a command's rule for its file arguments, said in its own
// words: "knee report needs one or more result files" rather than cobra's
// "requires at least 1 arg(s)". most 0 means no limit.
func needFiles(least, most int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) >= least && (most == 0 || len(args) <= most) {
			return nil
		}
		return usageErr("%s needs %s, got %s; e.g. %s", c.Name(), what,
			results.Plural(len(args), "file"), firstExample(c))
	}
}

// firstExample is a command's first example line, trimmed.
func firstExample(c *cobra.Command) string {
	line, _, _ := strings.Cut(strings.TrimSpace(c.Example), "\n")
	return strings.TrimSpace(line)
}
