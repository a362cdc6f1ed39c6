package cmd

import (
	"bytes"
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
		RunE: runtimeErrors(func(c *cobra.Command, args []string) error {
			if output == "" {
				return usageErr("give -o for the merged file")
			}
			// A sweep's CSV goes beside its JSON, where that is a file:
			// standard output or a descriptor takes the JSON alone.
			csvPath, pngPath := "", ""
			if results.Replaceable(output) {
				csvPath = strings.TrimSuffix(output, ".json") + ".csv"
				pngPath = strings.TrimSuffix(output, ".json") + ".png"
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
			out := c.OutOrStdout()
			if !sweep {
				var runs []*results.Run
				for i, p := range args {
					r, err := results.DecodeRun(p, files[i])
					if err != nil {
						return withCode(ExitRuntime, err)
					}
					runs = append(runs, r)
				}
				m, err := results.MergeRuns(runs)
				if err != nil {
					return usageErr("%v", err)
				}
				if err := report.Run(out, m); err != nil {
					return err
				}
				if m.Server != nil {
					if err := report.Server(out, m.Server); err != nil {
						return err
					}
				}
				if err := results.WriteJSON(output, m); err != nil {
					return withCode(ExitRuntime, err)
				}
				fmt.Fprintf(out, "merged %d shards into %s\n", m.MergedShards, output)
				return nil
			}
			if err := checkIO(map[string]string{"--output": output, "--output (CSV)": csvPath, "--output (PNG)": pngPath}, argInputs(args)); err != nil {
				return err
			}
			var sweeps []*results.Sweep
			for i, p := range args {
				s, err := results.DecodeSweep(p, files[i])
				if err != nil {
					return withCode(ExitRuntime, err)
				}
				sweeps = append(sweeps, s)
			}
			m, err := results.MergeSweeps(sweeps)
			if err != nil {
				return usageErr("%v", err)
			}
			report.SweepTable(out, m, outputWidth(out))
			fmt.Fprintln(out)
			report.LevelWarnings(out, m)
			report.Knees(out, m)
			if err := writeSweepData(m, output, csvPath); err != nil {
				return withCode(ExitRuntime, err)
			}
			if csvPath == "" {
				fmt.Fprintf(out, "merged %d shards' sweeps into %s (no CSV or PNG: the output is not a file)\n", len(sweeps), output)
				return nil
			}
			var png bytes.Buffer
			if err := report.SweepPlot(&png, m); err != nil {
				fmt.Fprintf(c.ErrOrStderr(), "knee: the plot could not be drawn: %v\n", err)
				fmt.Fprintf(out, "merged %d shards' sweeps into %s and %s\n", len(sweeps), output, csvPath)
				return nil
			}
			if err := results.WriteOutput(pngPath, png.Bytes()); err != nil {
				return withCode(ExitRuntime, err)
			}
			fmt.Fprintf(out, "merged %d shards' sweeps into %s, %s and %s\n", len(sweeps), output, csvPath, pngPath)
			return nil
		}),
	}
	c.Flags().StringVarP(&output, "output", "o", "", "the merged result file (a sweep also gets its .csv and .png beside it)")
	return c
}
