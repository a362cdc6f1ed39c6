package cmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// sloFlags are the SLO of knee sweep, predict and plan, one syntax for
// all: --slo METRIC_pNN:MS[,…][,goodput:PERCENT] and --max-error-rate.
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
	fs.StringVar(&f.spec, "slo", def, what+" must meet: METRIC_pNN:MS bounds, comma-separated (metrics ttft, ttft_sched, itl, tpot, e2e, e2e_sched, "+
		"queue_wait; percentiles 50, 90, 95, 99), and goodput:PERCENT for the share of requests meeting every --goodput bound")
	fs.Float64Var(&f.maxErr, "max-error-rate", 0.02, "this error rate or more misses the SLO")
	if sweepSpelling {
		fs.StringVar(&f.metric, "slo-metric", "ttft_sched", "older spelling: the metric of a bare --slo MS (or goodput, then --slo is a percentage, 90 by default)")
		fs.Float64Var(&f.pct, "slo-percentile", 95, "older spelling: the percentile of a bare --slo MS")
	} else {
		fs.Float64Var(&f.goodShare, "goodput-share", 0, "older spelling of --slo goodput:PERCENT")
	}
}

// parse reads the SLO. goodput is --goodput, which a goodput share needs.
func (f *sloFlags) parse(c *cobra.Command, goodput string) (results.SLO, error) {
	fs := c.Flags()
	if !(f.maxErr > 0) || f.maxErr > 1 {
		return results.SLO{}, usageErr("--max-error-rate must be in (0, 1]")
	}
	spec := strings.TrimSpace(f.spec)
	oldSpelling := fs.Changed("slo-metric") || fs.Changed("slo-percentile")
	v, err := strconv.ParseFloat(spec, 64)
	if err != nil && oldSpelling && fs.Changed("slo") {
		return results.SLO{}, usageErr("--slo %s names its metrics: leave out --slo-metric and --slo-percentile, the older spelling of a bare --slo MS", spec)
	}
	if err == nil || oldSpelling {
		// The older spelling: --slo MS of --slo-metric at --slo-percentile.
		if !fs.Changed("slo") {
			v = 300
		}
		if f.metric == results.GoodputMetric {
			if !fs.Changed("slo") {
				v = 90
			}
			spec = fmt.Sprintf("goodput:%s", num(v))
		} else {
			spec = fmt.Sprintf("%s_p%s:%s", f.metric, num(f.pct), num(v))
		}
	}
	bounds, good, err := results.ParseBounds(spec)
	if err != nil {
		return results.SLO{}, usageErr("--slo: %w", err)
	}
	if fs.Changed("goodput-share") {
		if !(f.goodShare > 0) || f.goodShare > 100 {
			return results.SLO{}, usageErr("--goodput-share is a percentage in (0, 100]")
		}
		good = f.goodShare
	}
	if good > 0 && goodput == "" {
		return results.SLO{}, usageErr("a goodput share in the SLO needs --goodput bounds, e.g. --goodput ttft:300,tpot:50")
	}
	return results.SLO{Bounds: bounds, MaxErrorRate: f.maxErr, MinGoodPercent: good}, nil
}
