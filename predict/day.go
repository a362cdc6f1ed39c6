package predict

import (
	"cmp"
	"math"
	"time"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// SimulateDay runs a fleet of replicas, each behaving as c says, through
// the rate curve under policy p, second by second: arrivals at the
// curve's rate, split evenly over the replicas serving; a second meets
// the SLO when every replica's share is within its capacity and no queue
// is left from before; what more than the replicas' saturation holds
// queues (a fluid queue, served first in first out as it drains). The
// fleet starts the day at what the policy asks for at its first rate;
// tp and price make GPU-hours and cost. Every replica counts from the
// moment it is asked for: a loading replica holds its GPUs.
func SimulateDay(curve workload.RateCurve, c ReplicaCurve, p Policy, tp int, price float64) results.DayPolicy {
	seconds := int(math.Ceil(curve.End.Seconds()))
	d := &day{c: c, p: p, curve: curve,
		out:      results.DayPolicy{Name: cmp.Or(p.Name, p.String()), Policy: p.String(), Static: p.Target == targetStatic},
		interval: max(int(p.Interval/time.Second), 1), delay: int(math.Ceil(p.Delay.Seconds())),
		cooldown: int(math.Ceil(p.Cooldown.Seconds())), lastScale: math.MinInt / 2, minute: newMinuteTally()}
	d.ready = p.desired(c, d.rate(0), 0)
	d.asked = []askedAt{{0, d.ready}}
	d.observed = d.rate(0)
	for s := range seconds {
		if s > 0 && s%d.interval == 0 {
			d.rescale(s)
		}
		for len(d.loading) > 0 && d.loading[0] <= s {
			d.loading, d.ready = d.loading[1:], d.ready+1
		}
		d.serve(s)
	}
	out := d.out
	d.minute.flush(&out)
	out.GPUHours = d.replicaSeconds * float64(tp) / 3600
	out.Cost = out.GPUHours * price
	out.MeanReplicas = d.replicaSeconds / float64(max(seconds, 1))
	out.Attainment = 1
	if d.arrived > 0 {
		out.Attainment = d.met / d.arrived
	}
	return out
}

// day is a fleet under a policy through a day, a second at a time.
type day struct {
	c                            ReplicaCurve
	p                            Policy
	curve                        workload.RateCurve
	out                          results.DayPolicy
	interval, delay, cooldown    int
	ready                        int
	loading                      []int // when each replica asked for serves
	asked                        []askedAt
	lastScale                    int
	backlog, observed            float64
	replicaSeconds, met, arrived float64
	minute                       *minuteTally
}

func (d *day) rate(s int) float64 { return d.curve.RateAt(time.Duration(s) * time.Second) }

// rescale is the policy's decision at second s, on the rate observed over
// the last interval: up at once (at most doubling, or four more), down
// only past the cooldown and only to the most asked for within it.
func (d *day) rescale(s int) {
	d.observed = 0
	for k := s - d.interval; k < s; k++ {
		d.observed += d.rate(k) / float64(d.interval)
	}
	want := d.p.desired(d.c, d.observed, d.backlog)
	d.asked = append(d.asked, askedAt{s, want})
	total := d.ready + len(d.loading)
	want = min(want, max(2*total, total+4))
	switch {
	case want > total:
		for range want - total {
			d.loading = append(d.loading, s+d.delay)
		}
		d.out.ScaleUps++
		d.lastScale = s
	case want < total && s-d.lastScale >= d.cooldown:
		keep := want
		for i := len(d.asked) - 1; i >= 0 && s-d.asked[i].at < d.cooldown; i-- {
			keep = max(keep, d.asked[i].n)
		}
		if keep < total {
			for total > keep && len(d.loading) > 0 {
				d.loading, total = d.loading[:len(d.loading)-1], total-1
			}
			d.ready -= total - keep
			d.out.ScaleDowns++
			d.lastScale = s
		}
	}
	for len(d.asked) > 1 && s-d.asked[0].at >= d.cooldown {
		d.asked = d.asked[1:]
	}
}

// serve is second s's arrivals against the ready replicas: met when they
// hold the rate with no backlog, else missed for a reason.
func (d *day) serve(s int) {
	r := d.rate(s)
	ok := d.ready > 0 && r <= float64(d.ready)*d.c.Capacity*(1+1e-9) && d.backlog <= 1e-9
	why := ""
	if !ok && r > 0 {
		why = missReason(d.c, d.p, r, d.observed, d.ready, len(d.loading), d.backlog)
		if d.out.MissedBy == nil {
			d.out.MissedBy = map[string]float64{}
		}
		d.out.MissedBy[why] += r
	}
	served := math.Min(d.backlog+r, float64(d.ready)*d.c.Saturation)
	d.backlog = math.Max(d.backlog+r-served, 0)
	d.arrived += r
	if ok {
		d.met += r
	}
	d.replicaSeconds += float64(d.ready + len(d.loading))
	d.out.PeakReplicas = max(d.out.PeakReplicas, d.ready+len(d.loading))
	d.minute.add(s, r, ok, why, d.ready, len(d.loading), &d.out)
}

// askedAt is what a policy asked for, and when.
type askedAt struct{ at, n int }

// missReason says why a second missed the SLO.
func missReason(c ReplicaCurve, p Policy, rate, observed float64, ready, loading int, backlog float64) string {
	need := int(math.Ceil(rate/c.Capacity - 1e-9))
	switch {
	case ready > 0 && rate <= float64(ready)*c.Capacity*(1+1e-9):
		return results.MissBacklog
	case need > p.Max:
		return results.MissMaxReplicas
	case ready+loading >= need:
		return results.MissColdStart
	case observed < rate:
		return results.MissScalingLag
	}
	return results.MissTarget
}

// minuteTally gathers a day's seconds into minutes.
type minuteTally struct {
	n              int
	arrived, met   float64
	rateSum        float64
	seconds        int
	reasons        map[string]float64
	ready, loading int
	// open is the index in Missed of the span the last minute extended
	// (-1: the last minute met the SLO).
	open int
}

func newMinuteTally() *minuteTally { return &minuteTally{reasons: map[string]float64{}, open: -1} }

// add counts second s.
func (m *minuteTally) add(s int, rate float64, ok bool, why string, ready, loading int, out *results.DayPolicy) {
	if s/60 != m.n && m.seconds > 0 {
		m.flush(out)
	}
	m.n = s / 60
	m.seconds++
	m.arrived += rate
	m.rateSum += rate
	if ok {
		m.met += rate
	} else if why != "" {
		m.reasons[why] += rate
	}
	m.ready, m.loading = ready, loading
}

// flush closes the minute counted so far.
func (m *minuteTally) flush(out *results.DayPolicy) {
	if m.seconds == 0 {
		return
	}
	att := 1.0
	if m.arrived > 0 {
		att = m.met / m.arrived
	}
	out.Minutes++
	out.Timeline = append(out.Timeline, results.DayMinute{Minute: m.n, Rate: m.rateSum / float64(m.seconds), Replicas: m.ready, Loading: m.loading, Attainment: att})
	if att >= 1-1e-12 {
		out.MinutesMet++
		m.open = -1
	} else {
		why, most := "", -1.0
		for _, r := range []string{results.MissScalingLag, results.MissColdStart, results.MissTarget, results.MissMaxReplicas, results.MissBacklog} {
			if m.reasons[r] > most {
				why, most = r, m.reasons[r]
			}
		}
		missed := m.arrived - m.met
		if o := m.open; o >= 0 && out.Missed[o].Reason == why && out.Missed[o].To == m.n-1 {
			out.Missed[o].To = m.n
			out.Missed[o].Requests += missed
		} else {
			out.Missed = append(out.Missed, results.MissedSpan{From: m.n, To: m.n, Reason: why, Requests: missed})
			m.open = len(out.Missed) - 1
		}
	}
	*m = minuteTally{reasons: map[string]float64{}, open: m.open}
}
