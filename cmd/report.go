package cmd

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

func newReportCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "report FILE.json [FILE.json ...]",
		Short: "Write one self-contained HTML page of runs and sweeps",
		Long: `report reads result files written by knee run --output or knee sweep (one
sweep, several to compare, or runs) and writes one HTML page: the header
facts, the plots, the tables, the knees, the server view, the client's
health and every warning. The page holds its styles and plots itself and
loads nothing when viewed.`,
		Example: `  knee report results/h100.json
  knee report results/h100.json results/l40s.json -o compare.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: runtimeErrors(func(c *cobra.Command, args []string) error {
			if output == "" {
				output = strings.TrimSuffix(args[0], ".json") + ".html"
			}
			if err := checkIO(map[string]string{"--output": output}, argInputs(args)); err != nil {
				return err
			}
			files, err := readInputs(c, args)
			if err != nil {
				return err
			}
			in := report.HTMLInput{Version: version()}
			for i, path := range args {
				if s, err := results.DecodeSweep(path, files[i]); err == nil {
					in.Sweeps = append(in.Sweeps, s)
					continue
				}
				r, err := results.DecodeRun(path, files[i])
				if err != nil {
					return err
				}
				in.Runs = append(in.Runs, r)
			}
			var page bytes.Buffer
			if err := report.HTML(&page, in); err != nil {
				return err
			}
			if results.IsStdout(output) {
				_, err := c.OutOrStdout().Write(page.Bytes())
				return err
			}
			if err := results.WriteOutput(output, page.Bytes()); err != nil {
				return fmt.Errorf("writing %s: %w", output, err)
			}
			fmt.Fprintf(c.OutOrStdout(), "wrote %s\n", output)
			return nil
		}),
	}
	c.Flags().StringVarP(&output, "output", "o", "", "the HTML file (default: the first input with .html; - for standard output)")
	return c
}
