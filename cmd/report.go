package cmd

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/results/input"
	"github.com/spf13/cobra"
)

func newReportCmd() *cobra.Command {
	var output, records string
	c := &cobra.Command{
		Use:   "report FILE.json [FILE.json ...]",
		Short: "Write one self-contained, interactive HTML page of runs, sweeps, plans or calibrations",
		Long: `report reads result files (a run, a sweep, several sweeps to compare, a
merged or predicted one, a plan, a calibration's JSON) and writes one HTML
page: the header facts, charts against load with the knees and the SLO
marked, each level's distributions from its histograms, an SLO explorer,
the tables, the server view, the client's health, and every warning and
note. Its charts are drawn in the page; it holds its styles, script and data
itself and loads nothing when viewed. --records adds a run's timeline of
sends, completions and requests in flight.`,
		Example: `  knee report results/h100.json
  knee report results/h100.json results/l40s.json -o compare.html`,
		Args: needFiles(1, 0, "one or more result files"),
		RunE: runtimeErrors(func(c *cobra.Command, args []string) error { return writeReport(c, args, output, records) }),
	}
	c.Flags().StringVarP(&output, "output", "o", "", "the HTML file (default: the first input with .html; - for standard output)")
	c.Flags().StringVar(&records, "records", "", "a run's --records file, for its timeline of sends, completions and requests in flight")
	markInputs(c, "records")
	markOutputs(c, "output")
	return c
}

// writeReport writes the page of the result files in args to output
// (the first input's name with .html when empty), with a run's --records.
func writeReport(c *cobra.Command, args []string, output, records string) error {
	if output == "" {
		output = strings.TrimSuffix(args[0], ".json") + ".html"
	}
	inputs := argInputs(args)
	if records != "" {
		inputs["--records"] = records
	}
	if err := checkIO(map[string]string{"--output": output}, inputs); err != nil {
		return err
	}
	files, err := readInputs(c, args)
	if err != nil {
		return err
	}
	in, err := report.Classify(args, files)
	if err != nil {
		return err
	}
	in.Version = version()
	if records != "" {
		if len(in.Runs) != 1 {
			return usageErr("--records is a run's: give one run file with it")
		}
		f, err := input.Open(c.Context(), records, results.MaxRecordsBytes, "a records file")
		if err != nil {
			return withCode(ExitRuntime, fmt.Errorf("--records: %w", err))
		}
		defer f.Close()
		lines, err := results.ReadRecords(f)
		if err != nil {
			return usageErr("--records %s: %w", records, err)
		}
		in.Records = map[int][]results.RecordLine{0: lines}
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
}
