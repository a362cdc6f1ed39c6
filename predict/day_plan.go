package predict

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// DayQuestion asks how a fleet fares through a day of traffic: the rate
// curve (Trace names its file) under each autoscaling policy, against a
// static fleet for the peak. MinAttainment is the share of minutes that
// must meet the SLO for a policy to be chosen.
type DayQuestion struct {
	Trace         string
	Curve         workload.RateCurve
	Policies      []Policy
	MinAttainment float64
}

// curveLoads are the loads, as shares of one replica's capacity, a day's
// replica curve predicts: enough below capacity to place a queue or SLO
// target, and past it to find the most one completes.
var curveLoads = []float64{0.25, 0.5, 0.75, 0.9, 1, 1.25, 1.5, 2}

// replicaCurve predicts one replica of cand at loads around its capacity
// per, each over the plan's whole window (no early give-up: an overloaded
// level's completions are what saturation is), and returns the curve and
// the predictions it made.
func replicaCurve(ctx context.Context, o PlanOptions, cand *Candidate, per float64) (ReplicaCurve, int, error) {
	c := ReplicaCurve{Capacity: per}
	memo := &Memo{}
	var base float64
	n := 0
	for i, f := range curveLoads {
		load := f * per
		lv, err := o.Level(load)
		if err != nil {
			return c, n, err
		}
		v := &Virtual{Target: cand.Target, Replicas: 1, NoHistograms: true, Memo: memo}
		r, err := v.Run(ctx, lv)
		n++
		if err != nil {
			return c, n, err
		}
		if ctx.Err() != nil {
			return c, n, ctx.Err()
		}
		ok, _ := judge(o.SLO, r, o.Axis, load)
		// Requests waiting for a first token past the lightest load's time
		// to it (Little's law: arrivals a second times the extra wait).
		ttft := r.Stats.TTFT.Mean / 1000
		if i == 0 {
			base = ttft
		}
		slack := math.Inf(1)
		for _, b := range o.SLO.Bounds {
			if v, ok := b.Value(r); ok && b.Ms > 0 {
				slack = math.Min(slack, (b.Ms-v)/b.Ms)
			}
		}
		if math.IsInf(slack, 1) {
			slack = 1
		}
		if !ok {
			slack = math.Min(slack, -1e-9)
		}
		c.Points = append(c.Points, CurvePoint{Load: load, Waiting: math.Max(load*(ttft-base), 0), Slack: slack})
		c.Saturation = math.Max(c.Saturation, r.Throughput.RequestsPerS)
	}
	// A replica completes at least what it met the SLO at.
	c.Saturation = math.Max(c.Saturation, per)
	return c, n, nil
}

// planDay simulates the plan's answer through the day: the cheapest row
// meeting the SLO at the peak, one replica's curve predicted around its
// capacity, under static provisioning for the peak and each policy.
func planDay(ctx context.Context, q *DayQuestion, o PlanOptions, rows []results.PlanRow, cands []*Candidate, price map[string]float64) (*results.DayPlan, int) {
	d := &results.DayPlan{Trace: q.Trace, DurationS: q.Curve.End.Seconds(), PeakRate: q.Curve.Peak(), MeanRate: q.Curve.Mean(), MinAttainment: q.MinAttainment}
	i := slices.IndexFunc(rows, func(r results.PlanRow) bool { return r.Meets })
	if i < 0 {
		d.Notes = append(d.Notes, "no configuration meets the SLO at the day's peak: no day simulated")
		return d, 0
	}
	row := rows[i]
	k := slices.IndexFunc(cands, func(c *Candidate) bool { return c.Name == row.Config })
	if k < 0 {
		return d, 0
	}
	d.Config, d.TP, d.PricePerGPUHour = row.Config, row.TP, price[row.GPU]
	curve, n, err := replicaCurve(ctx, o, cands[k], row.PerReplica)
	if err != nil {
		d.Notes = append(d.Notes, "the replica's curve was not predicted: "+stopped(err))
		return d, n
	}
	d.Capacity, d.Saturation = curve.Capacity, curve.Saturation
	for _, p := range curve.Points {
		d.Curve = append(d.Curve, results.DayCurvePt{Load: p.Load, Waiting: p.Waiting, Slack: p.Slack, Meets: p.Slack >= 0})
	}
	static := int(math.Ceil(d.PeakRate/curve.Capacity - 1e-9))
	d.Policies = append(d.Policies, SimulateDay(q.Curve, curve, StaticPolicy(max(static, 1)), row.TP, d.PricePerGPUHour))
	best := -1
	for _, p := range q.Policies {
		r := SimulateDay(q.Curve, curve, p, row.TP, d.PricePerGPUHour)
		d.Policies = append(d.Policies, r)
		if r.MinuteShare() >= q.MinAttainment && (best < 0 || r.GPUHours < d.Policies[best].GPUHours) {
			best = len(d.Policies) - 1
		}
	}
	if best >= 0 {
		d.Cheapest = d.Policies[best].Name
	}
	d.Notes = append(d.Notes,
		fmt.Sprintf("the day is simulated second by second on one replica's predicted curve (it meets the SLO up to %.3g/s and completes at most %.3g/s): load splits evenly over the replicas serving, what they cannot complete queues, and a second meets the SLO when every replica is within its capacity and no queue is left", curve.Capacity, curve.Saturation),
		fmt.Sprintf("static for the peak is %d replicas of one replica's capacity (%.3g/s); the plan's own search of a fleet at the peak found %d (a fleet behind a router can hold more than its replicas' sum)", static, curve.Capacity, row.Replicas))
	return d, n
}
