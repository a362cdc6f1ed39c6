package cmd

import (
	"errors"
	"fmt"
	"os"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

type runOptions struct {
	target  targetFlags
	load    loadFlags
	output  string
	records string
}

func newRunCmd() *cobra.Command {
	o := &runOptions{}
	c := &cobra.Command{
		Use:   "run",
		Short: "Benchmark an OpenAI-compatible endpoint at one load",
		Long: `run drives one load against the target and reports latencies measured from
the send (TTFT, ITL, TPOT, E2E) and from the scheduled arrival (TTFT sched,
E2E sched, queue wait), throughput, and the client's own health.

With no --base-url (and no $OPENAI_BASE_URL), knee starts its built-in
simulator and benchmarks that.`,
		Example: `  knee run --base-url http://localhost:8000/v1 --rate 5 --duration 60s --input-tokens 512 --max-tokens 128
  knee run --concurrency 16 --requests 500 --output run.json`,
		Args: cobra.NoArgs,
		RunE: runtimeErrors(o.run),
	}
	o.target.register(c)
	o.load.register(c)
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the whole result to this JSON file")
	c.Flags().StringVar(&o.records, "records", "", "stream one JSON line per request to this file")
	return c
}

func (o *runOptions) run(c *cobra.Command, _ []string) error {
	load, src, err := o.load.build(c)
	if err != nil {
		return err
	}
	if err := o.target.validate(); err != nil {
		return err
	}
	ctx := c.Context()
	tgt, err := o.target.resolve(ctx, c)
	if err != nil {
		return err
	}
	defer tgt.stop()
	client, err := bench.NewClient(tgt.target, load.PoolSize())
	if err != nil {
		return usageErr("%v", err)
	}
	defer client.Close()
	cfg := o.target.config(tgt.target.BaseURL, tgt.target.Model)
	cfg.BuiltinSim = tgt.builtin
	o.load.config(&cfg, load)
	opts := bench.Options{Client: client, Source: src, Load: load, Config: cfg}
	if o.records != "" {
		f, err := os.Create(o.records)
		if err != nil {
			return withCode(ExitRuntime, err)
		}
		defer f.Close()
		opts.Records = f
	}
	res, err := bench.Run(ctx, opts)
	if err != nil {
		return usageErr("%v", err)
	}
	res.Environment = environment()
	out := c.OutOrStdout()
	if err := report.Run(out, res); err != nil {
		return err
	}
	if o.output != "" {
		if err := results.WriteJSON(o.output, res); err != nil {
			return withCode(ExitRuntime, fmt.Errorf("writing %s: %w", o.output, err))
		}
		fmt.Fprintf(out, "wrote %s\n", o.output)
	}
	if res.Requests.OK == 0 && res.Requests.Failed > 0 {
		return &exitError{ExitFailed, errors.New("every request failed")}
	}
	return nil
}
