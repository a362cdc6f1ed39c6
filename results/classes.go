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
	// Knee is nil when the class missed its SLO at the lightest load
	// judged, or when no level judged it (Judged 0).
	Knee *Knee `json:"knee"`
	// FirstMissed is the first load at which it missed (nil: never).
	FirstMissed *float64 `json:"first_missed,omitempty"`
	// Judged is how many levels, up to its first miss, judged the class:
	// a level that dealt it no finished request cannot.
	Judged int `json:"judged"`
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
			ck.Judged++
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

// Interference is how the other classes of a mix moved as a sweep raised
// one class's rate (--vary): one row of the class × class matrix.
type Interference struct {
	Varied string            `json:"varied"`
	Rows   []InterferenceRow `json:"rows"`
}

// InterferenceRow is one other class: its TTFT sched p95 at the lightest
// and heaviest level, and the least-squares slope of it (ms) and of its
// goodput share against the varied class's rate, per request a second.
type InterferenceRow struct {
	Class             string   `json:"class"`
	TTFTSchedP95From  float64  `json:"ttft_sched_p95_from_ms"`
	TTFTSchedP95To    float64  `json:"ttft_sched_p95_to_ms"`
	TTFTSchedP95Slope float64  `json:"ttft_sched_p95_ms_per_unit"`
	GoodputSlope      *float64 `json:"goodput_share_per_unit,omitempty"`
}

// findInterference reads the interference row of a sweep that varied one
// class, over the levels the client could time.
func (s *Sweep) findInterference() {
	s.Interference = nil
	varied := ""
	for _, l := range s.Levels {
		if l.Run == nil {
			continue
		}
		for name, c := range l.Run.Classes {
			if c.MixClass != nil && c.MixClass.Varied {
				varied = name
			}
		}
	}
	if varied == "" {
		return
	}
	in := &Interference{Varied: varied}
	names := map[string]bool{}
	for _, l := range s.Levels {
		if l.Run != nil {
			for name := range l.Run.Classes {
				names[name] = name != varied
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if !names[name] {
			continue
		}
		var xs, ys, gs []float64
		for _, l := range s.Levels {
			if l.Run == nil || l.Verdict != nil && !l.Verdict.Judged && l.Run.Health.Verdict != VerdictVirtual {
				continue
			}
			c := l.Run.Classes[name]
			if c == nil || c.Stats.TTFTSched.Count == 0 {
				continue
			}
			xs, ys = append(xs, l.Load), append(ys, c.Stats.TTFTSched.P95)
			if c.Goodput != nil {
				gs = append(gs, c.Goodput.Share)
			}
		}
		if len(xs) < 2 {
			continue
		}
		row := InterferenceRow{Class: name, TTFTSchedP95From: ys[0], TTFTSchedP95To: ys[len(ys)-1], TTFTSchedP95Slope: slope(xs, ys)}
		if len(gs) == len(xs) {
			g := slope(xs, gs)
			row.GoodputSlope = &g
		}
		in.Rows = append(in.Rows, row)
	}
	s.Interference = in
}

// slope is the least-squares slope of ys against xs.
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	if den == 0 {
		return 0
	}
	return num / den
}
