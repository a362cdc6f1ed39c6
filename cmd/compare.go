package cmd

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

func newCompareCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:     "compare A.json B.json ...",
		Short:   "Overlay the curves of several sweeps and compare their knees",
		Example: `  knee compare results/L40S.json results/H100.json -o results/compare.png`,
		Args:    cobra.MinimumNArgs(1),
		RunE: runtimeErrors(func(c *cobra.Command, args []string) error {
			if ext := strings.ToLower(filepath.Ext(output)); ext == ".html" || ext == ".htm" || ext == ".json" || ext == ".csv" {
				// The bytes would be a PNG's whatever the name says.
				return usageErr("--output %s: knee compare draws a PNG; for a page comparing them, knee report %s -o %s", output, strings.Join(args, " "), output)
			}
			if err := checkIO(map[string]string{"--output": output}, argInputs(args)); err != nil {
				return err
			}
			files, err := readInputs(c, args)
			if err != nil {
				return err
			}
			sweeps, err := results.DecodeSweeps(args, files)
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			if err := report.Compare(out, sweeps); err != nil {
				return err
			}
			if output != "" {
				var b bytes.Buffer
				if err := report.ComparePlot(&b, sweeps); err != nil {
					return err
				}
				if err := results.WriteOutput(output, b.Bytes()); err != nil {
					return err
				}
				fmt.Fprintf(out, "wrote %s\n", output)
			}
			return nil
		}),
	}
	c.Flags().StringVarP(&output, "output", "o", "", "write the overlaid plot to this PNG")
	markOutputs(c, "output")
	return c
}

func newPresetsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "presets",
		Short: "List the hardware, model and sweep presets with their numbers",
		Args:  cobra.NoArgs,
		RunE: runtimeErrors(func(c *cobra.Command, _ []string) error {
			return report.Presets(c.OutOrStdout())
		}),
	}
}
