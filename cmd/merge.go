package cmd

import (
	"fmt"
	"strings"

	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

func newMergeCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "merge SHARD.json... -o merged.json",
		Short: "Join the result files of the shards of one load (run or sweep)",
		Long: `merge joins the result files that knee run or knee sweep wrote with --shard
I/N (or --shards N) into the result one process sending the whole load would
have measured: HDR histograms merged losslessly, so percentiles are those of
the union of the requests; counts, errors and tokens summed; throughput over
the union of the windows. Client health is the worst shard's, named; the
server's view is shard 0's. Sweep files are merged level by level and their
knees found again; a sweep also gets its CSV and PNG next to the JSON. The merged file
is a normal result: knee compare and knee report take it.`,
		Example: `  knee merge results/shard-*.json -o results/merged.json`,
		Args:    cobra.MinimumNArgs(1),
		RunE:    runtimeErrors(func(c *cobra.Command, args []string) error { return merge(c, args, output) }),
	}
	c.Flags().StringVarP(&output, "output", "o", "", "the merged result file (a sweep also gets its .csv and .png beside it)")
	markOutputs(c, "output")
	return c
}

// merge joins the shards' files named in args into output.
func merge(c *cobra.Command, args []string, output string) error {
	if output == "" {
		return usageErr("give -o for the merged file")
	}
	if err := checkIO(map[string]string{"--output": output}, argInputs(args)); err != nil {
		return err
	}
	files, err := readInputs(c, args)
	if err != nil {
		return err
	}
	sweep, err := results.IsSweep(args[0], files[0])
	if err != nil {
		return withCode(ExitRuntime, err)
	}
	if sweep {
		return mergeSweeps(c, args, files, output)
	}
	runs, err := results.DecodeRuns(args, files)
	if err != nil {
		return withCode(ExitRuntime, err)
	}
	m, err := results.MergeRuns(runs)
	if err != nil {
		return usageErr("%w", err)
	}
	out := c.OutOrStdout()
	if err := report.RunAndServer(out, m); err != nil {
		return err
	}
	if err := results.WriteJSON(output, m); err != nil {
		return withCode(ExitRuntime, err)
	}
	fmt.Fprintf(out, "merged %d shards into %s\n", m.MergedShards, output)
	return nil
}

// mergeSweeps merges sweep files level by level. A sweep's CSV and PNG go
// beside its JSON, where that is a file: standard output or a descriptor
// takes the JSON alone.
func mergeSweeps(c *cobra.Command, args []string, files [][]byte, output string) error {
	f := report.SweepFiles{JSON: output}
	if results.Replaceable(output) {
		f.CSV, f.PNG = strings.TrimSuffix(output, ".json")+".csv", strings.TrimSuffix(output, ".json")+".png"
	}
	if err := checkIO(map[string]string{"--output": output, "--output (CSV)": f.CSV, "--output (PNG)": f.PNG}, argInputs(args)); err != nil {
		return err
	}
	sweeps, err := results.DecodeSweeps(args, files)
	if err != nil {
		return withCode(ExitRuntime, err)
	}
	m, err := results.MergeSweeps(sweeps)
	if err != nil {
		return usageErr("%w", err)
	}
	out := c.OutOrStdout()
	report.SweepTable(out, m, report.Width(out))
	fmt.Fprintln(out)
	report.LevelWarnings(out, m)
	report.Knees(out, m)
	said := fmt.Sprintf("merged %d shards' sweeps into", len(sweeps))
	if f.CSV == "" {
		if err := f.WriteData(m); err != nil {
			return withCode(ExitRuntime, err)
		}
		fmt.Fprintf(out, "%s %s (no CSV or PNG: the output is not a file)\n", said, output)
		return nil
	}
	return writeSweep(c, m, f, said)
}
