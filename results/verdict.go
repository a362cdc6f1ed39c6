package results

import (
	"fmt"
	"math"
)

// Verdict is what an SLO says of a level: judged or not, met or not, and
// why.
type Verdict struct {
	// Judged is false for a level the SLO says nothing of: it failed, a
	// signal cut it short, or its client was unhealthy (and the sweep's
	// health policy leaves such levels out). Why then says which.
	Judged bool `json:"judged"`
	Meets  bool `json:"meets"`
	// Why says why a judged level misses, or why a level is not judged.
	Why string `json:"why,omitempty"`
	// Gate marks a miss that no latency bound could undo: no request
	// succeeded, errors past the rate, too many requests missing, or an
	// open loop that fell behind. The report's explorer, which tries other
	// bounds, keeps such a level missing whatever bound it tries.
	Gate bool `json:"gate,omitempty"`
}

// Judge says whether a level of a sweep along axis ("rate" or
// "concurrency") meets the SLO, and why not. healthPolicy is the sweep's
// (HealthExclude, also "", leaves a level whose client was unhealthy
// unjudged). A judged level meets the SLO when some request succeeded,
// its error rate is under MaxErrorRate, at most MaxMissingShare of its
// requests are missing, every bound holds, the goodput share (when
// asked) is reached, and an open loop kept pace with its arrivals.
func (o SLO) Judge(l Level, axis, healthPolicy string) Verdict {
	return o.judge(l, axis, healthPolicy, true)
}

// judge is Judge, with the saturation rule on or off.
func (o SLO) judge(l Level, axis, healthPolicy string, saturation bool) Verdict {
	r := l.Run
	switch {
	case r == nil:
		return Verdict{Why: "level failed: " + l.Error}
	case r.Interrupted:
		return Verdict{Why: "interrupted before the window ended"}
	case !r.Health.Healthy() && healthPolicy != HealthWarn && healthPolicy != HealthIgnore:
		what := "client unhealthy: "
		if r.Health.Verdict == VerdictHostStarved {
			what = "host starved: "
		}
		return Verdict{Why: what + joinReasons(r.Health.Reasons)}
	}
	miss := func(gate bool, format string, a ...any) Verdict {
		return Verdict{Judged: true, Why: fmt.Sprintf(format, a...), Gate: gate}
	}
	if r.Requests.OK == 0 {
		return miss(true, "no request succeeded")
	}
	if e := r.Requests.ErrorRate(); e >= o.MaxErrorRate {
		return miss(true, "errors %.1f%%", 100*e)
	}
	if m := r.MissingShare(); m > MaxMissingShare {
		return miss(true, "%.1f%% of its requests cut or never sent", 100*m)
	}
	for _, b := range o.Bounds {
		v, ok := b.Value(r)
		if !ok || math.IsNaN(v) {
			return miss(false, "no %s measured", b.Metric)
		}
		if v > b.Ms {
			return miss(false, "%s p%g %.0f ms > %g", b.Metric, b.Percentile, v, b.Ms)
		}
	}
	if o.MinGoodPercent > 0 && (r.Goodput == nil || r.Goodput.Finished == 0 || 100*r.Goodput.Share < o.MinGoodPercent) {
		share := 0.0
		if r.Goodput != nil {
			share = 100 * r.Goodput.Share
		}
		return miss(false, "goodput %.1f%% < %g%%", share, o.MinGoodPercent)
	}
	if saturation && fellBehind(l, axis) {
		return miss(true, whyFellBehind)
	}
	return Verdict{Judged: true, Meets: true}
}

// fellBehind says whether an open-loop level, alone, saturated: its
// completions fell short of its arrivals, or its queue grew through the
// window (SaturationLevel's open-loop rule). A closed loop saturates only
// against a lighter level, so alone it never does.
func fellBehind(l Level, axis string) bool {
	p := levelPoint(l, axis)
	_, sat := SaturationLevel([]Point{p})
	return sat && p.ExpectedThroughput > 0
}

// levelPoint is a level as the knee functions see it, its latency left
// for the caller.
func levelPoint(l Level, axis string) Point {
	r := l.Run
	p := Point{Load: l.Load, Latency: math.NaN(), ErrorRate: r.Requests.ErrorRate(), Arrivals: r.Arrivals.WindowArrivals}
	p.Throughput, p.ExpectedThroughput = l.throughput(axis)
	if c := r.Calls; c != nil && c.Started+c.Shed > 0 {
		// A call's turns share its place in the window (a call on the
		// edge takes all its turns out): the sample is its calls.
		p.Arrivals = c.Started + c.Shed
	}
	if axis == "rate" {
		p.QueueGrowth = QueueGrowth(r.Arrivals)
	}
	return p
}

// FindKnees judges every level against the sweep's SLO (each level's
// Verdict) and computes the three knees of s, leaving out failed levels
// and, unless its HealthPolicy says otherwise, levels where the client
// was unhealthy.
func (s *Sweep) FindKnees() {
	defer s.findInterference()
	defer s.findClassKnees()
	s.Knees = Knees{}
	pts, best, crossed := s.judgeLevels()
	knee := func(i int) *Knee {
		k := &Knee{Load: pts[i].Load, Index: i}
		if lat := pts[i].Latency; !math.IsNaN(lat) && !math.IsInf(lat, 0) {
			k.LatencyMs = &lat
		}
		return k
	}
	if s.HealthPolicy == HealthWarn {
		for _, l := range s.Levels {
			if l.Run != nil && !l.Run.Health.Healthy() {
				s.Knees.JudgedUnhealthy = append(s.Knees.JudgedUnhealthy, ExcludedLevel{Load: l.Load,
					Reason: l.Run.Health.Verdict + ": " + joinReasons(l.Run.Health.Reasons)})
			}
		}
	}
	if best >= 0 {
		s.Knees.SLO = knee(best)
		s.Knees.SLONotReached = !crossed
	}
	i, shape := CurvatureKnee(pts, s.SLO.Threshold())
	s.Knees.CurveShape = string(shape)
	if shape == CurveKnee {
		s.Knees.Curvature = knee(i)
	}
	if i, ok := SaturationLevel(pts); ok {
		s.Knees.Saturation = knee(i)
	}
	s.noteOverruled(pts)
}

// judgeLevels gives each level its verdict and its point on the curve,
// noting the levels left out of the knees and why, and overruling a
// level's shortfall that a heavier level's pace disproves (overrule). The
// SLO knee (best) is the last of the judged levels that meet the SLO from
// the lightest up: a lucky level past the first miss cannot move it. It
// is crossed when some level past it was judged.
func (s *Sweep) judgeLevels() (pts []Point, best int, crossed bool) {
	pts = make([]Point, len(s.Levels))
	for i, l := range s.Levels {
		v := s.SLO.Judge(l, s.Axis, s.HealthPolicy)
		s.Levels[i].Verdict = &v
		if l.Run == nil {
			pts[i] = Point{Load: l.Load, Latency: math.NaN(), Excluded: true}
			s.Knees.Excluded = append(s.Knees.Excluded, ExcludedLevel{Load: l.Load, Reason: v.Why})
			continue
		}
		pts[i] = levelPoint(l, s.Axis)
		switch {
		case !v.Judged:
			pts[i].Excluded = true
			s.Knees.Excluded = append(s.Knees.Excluded, ExcludedLevel{Load: l.Load, Reason: v.Why})
		case l.Run.MissingShare() > MaxMissingShare:
			// Its slowest requests are missing, so its latencies read low
			// and cannot be said to meet the SLO; its completions are
			// real, and falling that far behind is saturation's business.
			pts[i].Unreliable = true
			s.Knees.Excluded = append(s.Knees.Excluded, ExcludedLevel{Load: l.Load, Saturation: true, Reason: missingReason(l.Run)})
		}
		if val, ok := s.SLO.Value(l.Run); ok {
			pts[i].Latency = val
		}
	}
	s.overrule(pts)
	best = -1
	missed := false
	for i, l := range s.Levels {
		switch v := l.Verdict; {
		case !v.Judged:
		case missed || best >= 0 && !v.Meets:
			missed, crossed = true, true
		case v.Meets:
			best = i
		default:
			missed = true
		}
	}
	return pts, best, crossed
}
