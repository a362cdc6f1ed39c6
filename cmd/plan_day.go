package cmd

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/workload"
	"github.com/spf13/cobra"
)

// dayFlags are knee plan's day of traffic: --trace, --autoscale and
// --min-attainment.
type dayFlags struct {
	trace         string
	autoscale     []string
	minAttainment float64
	// curve is --trace's, read by load.
	curve workload.RateCurve
}

// defaultPolicies are the policies a day is simulated under when
// --autoscale gives none: utilisation at two levels, a queue and an SLO
// margin, each with the model's load time as its delay.
var defaultPolicies = []string{"utilisation=0.6", "utilisation=0.8", "queue=2", "slo-margin=0.2"}

// maxCurveBytes bounds a rate curve or trace read for one: a week of
// per-second lines is about 10 MB; a trace's lines carry more.
const maxCurveBytes = 512 << 20

func (d *dayFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&d.trace, "trace", "", "plan for a day of traffic: a CSV of time,rate (seconds, HH:MM or RFC 3339; arrivals per second, each holding until the next line) or a timestamped trace (JSON lines); its peak is the target, and the answer is then simulated through it under --autoscale")
	fs.StringArrayVar(&d.autoscale, "autoscale", nil, "with --trace, an autoscaling policy to simulate (repeatable): TARGET=VALUE (utilisation=0.8, queue=2 waiting per replica, slo-margin=0.2), then delay=D (default: the model's load time), cooldown=D (5m), interval=D (15s), min=N (1), max=N (--max-replicas) (default: utilisation=0.6, utilisation=0.8, queue=2 and slo-margin=0.2)")
	fs.Float64Var(&d.minAttainment, "min-attainment", 0.99, "with --trace, the share of the day's minutes a policy must meet the SLO in to be chosen")
	markInputs(c, "trace")
}

// load reads --trace and returns its peak, the plan's target (0
// without --trace); a load given as well is refused.
func (d *dayFlags) load(c *cobra.Command, o *planOptions) (float64, error) {
	if d.trace == "" {
		return 0, nil
	}
	if c.Flags().Changed("rate") || c.Flags().Changed("concurrency") || o.findMax {
		return 0, usageErr("--trace is the load: give no --rate, --concurrency or --find-max-rate")
	}
	curve, err := readCurve(c, d.trace)
	if err != nil {
		return 0, err
	}
	d.curve = curve
	return curve.Peak(), nil
}

// question is the day: the curve, and the policies with the first
// fitting candidate's load time as their default delay. It is nil
// without --trace.
func (d *dayFlags) question(c *cobra.Command, first *predict.Candidate, maxReplicas int) (*predict.DayQuestion, error) {
	if d.trace == "" {
		if c.Flags().Changed("autoscale") || c.Flags().Changed("min-attainment") {
			return nil, usageErr("--autoscale and --min-attainment simulate a day: give its rate curve with --trace")
		}
		return nil, nil
	}
	if first == nil {
		return nil, nil // size says no configuration fits
	}
	if math.IsNaN(d.minAttainment) || d.minAttainment < 0 || d.minAttainment > 1 {
		return nil, usageErr("--min-attainment %g: a share, 0 to 1", d.minAttainment)
	}
	delay, err := first.Target.LoadTime()
	if err != nil {
		return nil, usageErr("%w", err)
	}
	def := predict.Policy{Delay: delay, Cooldown: 5 * time.Minute, Interval: 15 * time.Second, Min: 1, Max: maxReplicas}
	specs := d.autoscale
	if len(specs) == 0 {
		specs = defaultPolicies
	}
	q := &predict.DayQuestion{Trace: d.trace, Curve: d.curve, MinAttainment: d.minAttainment}
	for _, s := range specs {
		p, err := predict.ParsePolicy(s, def)
		if err != nil {
			return nil, usageErr("--autoscale: %w", err)
		}
		q.Policies = append(q.Policies, p)
	}
	return q, nil
}

// readCurve reads --trace.
func readCurve(c *cobra.Command, path string) (workload.RateCurve, error) {
	f, err := input.Open(c.Context(), path, maxCurveBytes, "a rate curve or trace")
	if err != nil {
		if errors.Is(err, input.ErrInterrupted) {
			return workload.RateCurve{}, withCode(ExitRuntime, err)
		}
		return workload.RateCurve{}, usageErr("--trace: %w", err)
	}
	defer f.Close()
	curve, err := workload.ReadRateCurve(f)
	if err != nil {
		return workload.RateCurve{}, usageErr("--trace %s: %w", path, err)
	}
	if curve.Peak() <= 0 {
		return workload.RateCurve{}, usageErr("--trace %s: every rate is 0: nothing to plan for", path)
	}
	return curve, nil
}

// dayCSV writes a day plan's minutes.
func dayCSV(path string, d *results.DayPlan) error {
	b, err := d.CSV()
	if err != nil {
		return err
	}
	if err := results.WriteOutput(path, b); err != nil {
		return withCode(ExitRuntime, fmt.Errorf("%s: %w", path, err))
	}
	return nil
}
