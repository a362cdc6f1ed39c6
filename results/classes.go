package results

import (
	"maps"
	"math"
	"slices"
)

// ClassKnee is a mix class's own knee in a sweep: the last load, from
// the lightest up, at which the class met its SLO, and the first at
// which it missed it.
type ClassKnee struct {
	Class string `json:"class"`
	SLO   string `json:"slo"`
	// Knee is nil when the class missed its SLO at the lightest load.
	Knee *Knee `json:"knee"`
	// FirstMissed is the first load at which it missed (nil: never).
	FirstMissed *float64 `json:"first_missed,omitempty"`
}

// findClassKnees finds each class's knee, as the SLO knee is found: a
// level the client was unfit to time (health) is not judged, and a
// level past a class's first miss cannot move its knee. The class that
// missed first is the one that degraded first.
func (s *Sweep) findClassKnees() {
	s.ClassKnees, s.DegradedFirst = nil, ""
	names := map[string]string{}
	for _, l := range s.Levels {
		if l.Run == nil {
			continue
		}
		for name, c := range l.Run.Classes {
			if c.MixClass != nil && c.MixClass.SLO != "" {
				names[name] = c.MixClass.SLO
			}
		}
	}
	first := math.Inf(1)
	for _, name := range slices.Sorted(maps.Keys(names)) {
		ck := ClassKnee{Class: name, SLO: names[name]}
		for i, l := range s.Levels {
			if l.Run == nil || l.Verdict != nil && !l.Verdict.Judged {
				continue
			}
			c := l.Run.Classes[name]
			if c == nil || c.MixClass == nil || c.MixClass.MetSLO == nil {
				continue
			}
			if !*c.MixClass.MetSLO {
				load := l.Load
				ck.FirstMissed = &load
				break
			}
			ck.Knee = &Knee{Load: l.Load, Index: i}
			if v, ok := firstBound(c); ok {
				ck.Knee.LatencyMs = &v
			}
		}
		switch {
		case ck.FirstMissed == nil:
		case *ck.FirstMissed < first:
			first, s.DegradedFirst = *ck.FirstMissed, name
		case *ck.FirstMissed == first:
			s.DegradedFirst += ", " + name // missed at the same load
		}
		s.ClassKnees = append(s.ClassKnees, ck)
	}
}

// firstBound is a class's value of the first bound of its SLO.
func firstBound(c *Run) (float64, bool) {
	bounds, _, err := ParseBounds(c.MixClass.SLO)
	if err != nil || len(bounds) == 0 {
		return 0, false
	}
	return bounds[0].Value(c)
}

// JainFairness is Jain's index over the classes' goodput (the share of
// each class's finished requests that met its own SLO's bounds): 1 when
// every class fares alike, 1/n when one class has it all. Nil with fewer
// than two classes that have an SLO.
func JainFairness(classes map[string]*Run) *float64 {
	var sum, sq float64
	n := 0
	for _, c := range classes {
		if c.Goodput == nil || c.MixClass == nil || c.MixClass.SLO == "" {
			continue
		}
		x := c.Goodput.Share
		sum += x
		sq += x * x
		n++
	}
	if n < 2 {
		return nil
	}
	v := 1.0
	if sq > 0 {
		v = sum * sum / (float64(n) * sq)
	}
	return &v
}
