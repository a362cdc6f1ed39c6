package results

import "fmt"

// A level can fall a little short of its offer without the server being
// saturated: with long-tailed answers, the requests that arrive late in a
// short window finish after it, and the window counts them missing. A
// server that then kept pace with a heavier offer, delivering clearly more,
// was not saturated at the lighter one (a live sweep called saturation at
// 2/s while 6–11/s met the SLO). Such a shortfall is overruled: the level
// is judged without the saturation rule, the saturation knee passes it,
// and the sweep says so (Knees.Overruled).

// OutpaceFactor is how much more throughput a heavier level that kept
// pace must deliver to overrule a lighter level's shortfall.
const OutpaceFactor = 1.2

// whyFellBehind is the verdict of a level that fell behind its offer.
const whyFellBehind = "fell behind the offered load"

// keptPace says a judged point kept up with its offer: an open loop's
// completions within 5% of it and no growing queue (a closed loop offers
// nothing to fall behind).
func keptPace(p Point) bool {
	if p.Excluded {
		return false
	}
	if p.ExpectedThroughput == 0 {
		return p.Throughput > 0
	}
	return p.Throughput >= 0.95*p.ExpectedThroughput && p.QueueGrowth < QueueGrowthWeak
}

// outpacedBy is the first level past i that kept pace while delivering at
// least OutpaceFactor times i's throughput, or -1.
func outpacedBy(pts []Point, i int) int {
	for j := i + 1; j < len(pts); j++ {
		if keptPace(pts[j]) && pts[j].Throughput >= OutpaceFactor*pts[i].Throughput {
			return j
		}
	}
	return -1
}

// overrule judges again, without the saturation rule, every level that
// missed only for falling behind while a heavier level kept pace.
func (s *Sweep) overrule(pts []Point) {
	for i := range s.Levels {
		l := &s.Levels[i]
		if l.Verdict == nil || l.Verdict.Why != whyFellBehind || outpacedBy(pts, i) < 0 {
			continue
		}
		v := s.SLO.judge(*l, s.Axis, s.HealthPolicy, false)
		l.Verdict = &v
	}
}

// noteOverruled notes in s.Knees.Overruled every open-loop level that,
// alone, fell behind its offer, where a heavier level kept pace: its
// verdict and the saturation knee passed it over, and the sweep says why.
func (s *Sweep) noteOverruled(pts []Point) {
	for i, p := range pts {
		if p.Excluded || p.ExpectedThroughput == 0 {
			continue
		}
		j := outpacedBy(pts, i)
		if _, alone := SaturationLevel([]Point{p}); !alone || j < 0 {
			continue
		}
		what := fmt.Sprintf("fell %.0f%% short of its offer", 100*(1-p.Throughput/p.ExpectedThroughput))
		if p.Throughput >= 0.95*p.ExpectedThroughput {
			what = "its queue seemed to grow through the window"
		}
		// The rates are the requests sent in each window that completed,
		// over it (the saturation rule's): a row's tput/s, the requests
		// that ended in the window, reads lower when answers outlast it.
		s.Knees.Overruled = append(s.Knees.Overruled, ExcludedLevel{Load: p.Load, Reason: fmt.Sprintf(
			"%s, but %g kept pace (%.3g/s of its %.3g/s offer completed, %.1f× this level's) — the window's edge, not saturation; "+
				"these rates count the requests sent in each window, a row's tput/s those that ended in it",
			what, pts[j].Load, pts[j].Throughput, pts[j].ExpectedThroughput, pts[j].Throughput/p.Throughput)})
	}
}
