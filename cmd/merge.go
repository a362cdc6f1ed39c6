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
	var repeats bool
	c := &cobra.Command{
		Use:   "merge SHARD.json... -o merged.json",
		Short: "Join the result files of the shards of one load (run or sweep)",
		Long: `merge joins the result files that knee run or knee sweep wrote with --shard
I/N (or --shards N) into the result one process sending the whole load would
have measured: HDR histograms merged losslessly, so percentiles are those of
the union of the requests; counts, errors and tokens summed; throughput over
the union of the windows. Client health is the worst shard's, named; the
server's view is shard 0's. Sweep files are merged level by level and their
knees found again; a sweep also gets its CSV and PNG next to the JSON. The
merged file is a normal result: knee compare and knee report take it.

With --repeats it pools instead the files of one level (or sweep) measured
again and again, one after another, each with its own --seed: the figures of
the union of their requests with a 95% interval across them, as --repeat gives.
This is how a sharded load is repeated: merge each repeat's shards, then pool
the merged files.`,
		Example: `  knee merge results/shard-*.json -o results/merged.json
  knee merge --repeats results/repeat-1.json results/repeat-2.json results/repeat-3.json -o results/pooled.json`,
		Args: needFiles(1, 0, "the result files of a load's shards (or, with --repeats, of its repeats)"),
		RunE: runtimeErrors(func(c *cobra.Command, args []string) error { return merge(c, args, output, repeats) }),
	}
	c.Flags().StringVarP(&output, "output", "o", "", "the merged result file (a sweep also gets its .csv and .png beside it)")
	c.Flags().BoolVar(&repeats, "repeats", false, "pool repeats of one level or sweep, each its own file (knee run or knee sweep with its own --seed, run one after another; merge a repeat's shards first) instead of joining shards")
	markOutputs(c, "output")
	return c
}

// merge joins the shards' files named in args into output, or with
// repeats pools repeats' files.
func merge(c *cobra.Command, args []string, output string, repeats bool) error {
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
		return mergeSweeps(c, args, files, output, repeats)
	}
	runs, err := results.DecodeRuns(args, files)
	if err != nil {
		return withCode(ExitRuntime, err)
	}
	if repeats {
		return poolRuns(c, runs, output)
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
func mergeSweeps(c *cobra.Command, args []string, files [][]byte, output string, repeats bool) error {
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
	merger, said := results.MergeSweeps, fmt.Sprintf("merged %d shards' sweeps into", len(sweeps))
	if repeats {
		merger, said = results.PoolSweepFiles, fmt.Sprintf("pooled %d repeats' sweeps into", len(sweeps))
	}
	m, err := merger(sweeps)
	if err != nil {
		return usageErr("%w", err)
	}
	out := c.OutOrStdout()
	// The table ends with the knees.
	report.SweepTable(out, m, report.Width(out))
	if f.CSV == "" {
		if err := f.WriteData(m); err != nil {
			return withCode(ExitRuntime, err)
		}
		fmt.Fprintf(out, "%s %s (no CSV or PNG: the output is not a file)\n", said, output)
		return nil
	}
	return writeSweep(c, m, f, said)
}

// poolRuns pools repeats' run files into output, printing the pooled run
// and each repeat's figures.
func poolRuns(c *cobra.Command, runs []*results.Run, output string) error {
	m, err := results.PoolRunFiles(runs)
	if err != nil {
		return usageErr("%w", err)
	}
	out := c.OutOrStdout()
	if err := report.RunAndServer(out, m); err != nil {
		return err
	}
	if err := report.RepeatFigures(out, m); err != nil {
		return err
	}
	if err := results.WriteJSON(output, m); err != nil {
		return withCode(ExitRuntime, err)
	}
	fmt.Fprintf(out, "pooled %d repeats into %s\n", m.Repeats.Count, output)
	return nil
}
