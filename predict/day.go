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
	out := results.DayPolicy{Name: cmp.Or(p.Name, p.String()), Policy: p.String(), Static: p.Target == targetStatic}
	seconds := int(math.Ceil(curve.End.Seconds()))
	interval := max(int(p.Interval/time.Second), 1)
	delay := int(math.Ceil(p.Delay.Seconds()))
	cooldown := int(math.Ceil(p.Cooldown.Seconds()))
	rate := func(s int) float64 { return curve.RateAt(time.Duration(s) * time.Second) }

	ready := p.desired(c, rate(0), 0)
	var loading []int // when each replica asked for serves
	asked := []askedAt{{0, ready}}
	lastScale := math.MinInt / 2
	backlog, observed := 0.0, rate(0)
	replicaSeconds, met, arrived := 0.0, 0.0, 0.0
	minute := newMinuteTally()
	for s := range seconds {
		if s > 0 && s%interval == 0 {
			observed = 0
			for k := s - interval; k < s; k++ {
				observed += rate(k) / float64(interval)
			}
			want := p.desired(c, observed, backlog)
			asked = append(asked, askedAt{s, want})
			total := ready + len(loading)
			want = min(want, max(2*total, total+4))
			switch {
			case want > total:
				for range want - total {
					loading = append(loading, s+delay)
				}
				out.ScaleUps++
				lastScale = s
			case want < total && s-lastScale >= cooldown:
				// Down only to the most asked for within the cooldown.
				keep := want
				for i := len(asked) - 1; i >= 0 && s-asked[i].at < cooldown; i-- {
					keep = max(keep, asked[i].n)
				}
				if keep < total {
					for total > keep && len(loading) > 0 {
						loading, total = loading[:len(loading)-1], total-1
					}
					ready -= total - keep
					out.ScaleDowns++
					lastScale = s
				}
			}
			for len(asked) > 1 && s-asked[0].at >= cooldown {
				asked = asked[1:]
			}
		}
		for len(loading) > 0 && loading[0] <= s {
			loading, ready = loading[1:], ready+1
		}
		r := rate(s)
		ok := ready > 0 && r <= float64(ready)*c.Capacity*(1+1e-9) && backlog <= 1e-9
		why := ""
		if !ok && r > 0 {
			why = missReason(c, p, r, observed, ready, len(loading), backlog)
			if out.MissedBy == nil {
				out.MissedBy = map[string]float64{}
			}
			out.MissedBy[why] += r
		}
		served := math.Min(backlog+r, float64(ready)*c.Saturation)
		backlog = math.Max(backlog+r-served, 0)
		arrived += r
		if ok {
			met += r
		}
		replicaSeconds += float64(ready + len(loading))
		out.PeakReplicas = max(out.PeakReplicas, ready+len(loading))
		minute.add(s, r, ok, why, ready, len(loading), &out)
	}
	minute.flush(&out)
	out.GPUHours = replicaSeconds * float64(tp) / 3600
	out.Cost = out.GPUHours * price
	out.MeanReplicas = replicaSeconds / float64(max(seconds, 1))
	out.Attainment = 1
	if arrived > 0 {
		out.Attainment = met / arrived
	}
	return out
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
