package cmd

import (
	"strconv"
	"strings"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload/kind"
	"github.com/spf13/cobra"
)

// sloFlags are the SLO of knee sweep, predict and plan, one syntax for
// all: --slo METRIC.pNN:MS[,…][,goodput:PERCENT] and --max-error-rate.
// The older spellings are taken too: a bare number with --slo-metric and
// --slo-percentile (sweep and predict), and --goodput-share (plan).
type sloFlags struct {
	spec      string
	metric    string
	pct       float64
	goodShare float64
	maxErr    float64
}

// register declares the flags, with def as --slo's default and old
// saying which older spellings the command took.
func (f *sloFlags) register(c *cobra.Command, def, what string, sweepSpelling bool) {
	fs := c.Flags()
	fs.StringVar(&f.spec, "slo", def, what+" must meet: METRIC.pNN:MS bounds, comma-separated (metrics "+strings.Join(results.Latencies(), ", ")+
		"; percentiles "+percentileList()+"; METRIC_pNN read alike), and goodput:PERCENT for the share of requests meeting every --goodput bound")
	fs.Float64Var(&f.maxErr, "max-error-rate", 0.02, "this error rate or more misses the SLO")
	if sweepSpelling {
		fs.StringVar(&f.metric, "slo-metric", "ttft_sched", "older spelling: the metric of a bare --slo MS (or goodput, then --slo is a percentage, 90 by default)")
		fs.Float64Var(&f.pct, "slo-percentile", 95, "older spelling: the percentile of a bare --slo MS")
	} else {
		fs.Float64Var(&f.goodShare, "goodput-share", 0, "older spelling of --slo goodput:PERCENT")
	}
}

// parse reads the SLO (results.SLOFlags). goodput is --goodput, which a
// goodput share needs.
func (f *sloFlags) parse(c *cobra.Command, goodput string) (results.SLO, error) {
	if err := f.pooled(c); err != nil {
		return results.SLO{}, err
	}
	slo, err := results.SLOFlags{Spec: f.spec, Metric: f.metric, Percentile: f.pct, GoodShare: f.goodShare, MaxErrorRate: f.maxErr,
		Goodput: goodput, Given: c.Flags().Changed}.SLO()
	if err != nil {
		return slo, usageErr("%w", err)
	}
	return slo, nil
}

// pooled bounds a pooling endpoint's latency (embeddings: one answer,
// no tokens streamed) by E2E: the default SLO's metric is made E2E's,
// and a bound on a token's timing is refused, there being none.
func (f *sloFlags) pooled(c *cobra.Command) error {
	ep := c.Flags().Lookup("endpoint")
	if ep == nil || !kind.Name(ep.Value.String()).Kind().Pooled() {
		return nil
	}
	fs := c.Flags()
	if !fs.Changed("slo") && !fs.Changed("slo-metric") {
		f.spec = strings.NewReplacer("ttft_sched", "e2e_sched", "ttft", "e2e").Replace(f.spec)
		return nil
	}
	for _, m := range []string{"ttft", "ttfat", "itl", "tpot"} {
		if strings.Contains(f.spec, m) || f.metric != "" && strings.HasPrefix(f.metric, m) && fs.Changed("slo-metric") {
			return usageErr("--slo %s: --endpoint %s streams no tokens, so %s has no value: bound e2e or e2e_sched", f.spec, ep.Value.String(), m)
		}
	}
	return nil
}

// percentileList is the percentiles a bound may name: "50, 90, 95, 99".
func percentileList() string {
	var out []string
	for _, p := range results.Percentiles {
		out = append(out, strconv.FormatFloat(p, 'f', -1, 64))
	}
	return strings.Join(out, ", ")
}
