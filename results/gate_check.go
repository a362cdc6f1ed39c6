package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Gate checks every rule of a regression gate, from base to cand: each
// figure's rule at every load both measured, each knee's once. A figure
// fails only when it moved the wrong way past its allowance by more than
// the 95% interval of the difference (from the repeats' intervals, summed
// in quadrature; none for files of one repeat), and a knee only when
// even the candidate's best repeat fell past the baseline's worst. A
// level that failed, or whose client was unhealthy, in either file is
// unjudged, and an unjudged check fails the gate: it cannot vouch for
// what it could not measure.
func Gate(base, cand *Sweep, rules []GateRule) GateResult {
	var g GateResult
	loads := commonLoads(base, cand)
	for _, r := range rules {
		if r.Unit == "level" {
			g.Checks = append(g.Checks, kneeCheck(base, cand, loads, r))
			continue
		}
		for _, load := range loads {
			g.Checks = append(g.Checks, figureCheck(levelAt(base, load), levelAt(cand, load), r))
		}
	}
	g.Passed = !slices.ContainsFunc(g.Checks, func(c GateCheck) bool { return c.Verdict != GateHolds })
	g.Inconclusive = !slices.ContainsFunc(g.Checks, func(c GateCheck) bool { return c.Verdict == GateFails || c.Verdict == GateUnjudged }) &&
		slices.ContainsFunc(g.Checks, func(c GateCheck) bool { return c.Verdict == GateInconclusive })
	if !repeated(base) && !repeated(cand) {
		g.Notes = append(g.Notes, "one repeat each: no interval, so any move past a rule's allowance fails it (--repeat 3 or more gives intervals)")
	} else if !repeated(base) || !repeated(cand) {
		g.Notes = append(g.Notes, "only one of the files was repeated: the intervals are its alone")
	}
	if base.Prediction != nil {
		g.Notes = append(g.Notes, "the baseline is a prediction (knee predict): its intervals are across its seeds, not a measurement's")
	}
	return g
}

func repeated(s *Sweep) bool { return s.Repeats != nil }

// levelAt is the sweep's level at load (one exists: loads are common).
func levelAt(s *Sweep, load float64) Level {
	i := slices.IndexFunc(s.Levels, func(l Level) bool { return l.Load == load })
	return s.Levels[i]
}

// figureCheck is rule r at one level.
func figureCheck(bl, cl Level, r GateRule) GateCheck {
	load := bl.Load
	c := GateCheck{Rule: r.Text, Load: &load, Unit: r.Unit}
	for _, side := range []struct {
		name string
		l    Level
	}{{"baseline", bl}, {"candidate", cl}} {
		switch {
		case side.l.Run == nil:
			c.Verdict, c.Why = GateUnjudged, fmt.Sprintf("the level failed in the %s: %s", side.name, side.l.Error)
			return c
		case !side.l.Run.Health.Healthy():
			c.Verdict, c.Why = GateUnjudged, fmt.Sprintf("the %s's client was %s at this level: its figures are not the server's", side.name, side.l.Run.Health.Verdict)
			return c
		}
	}
	b, okB := Figures(bl.Run)[r.Figure]
	v, okC := Figures(cl.Run)[r.Figure]
	if !okB || !okC {
		c.Verdict, c.Why = GateUnjudged, fmt.Sprintf("%s was not measured in both files at this level", r.Figure)
		return c
	}
	c.Baseline, c.Candidate = &b, &v
	c.Noise = differenceNoise(bl.Run, cl.Run, r.Figure)
	dir := 1.0
	if HigherIsBetter(r.Figure) {
		dir = -1
	}
	var change, worse float64
	switch r.Unit {
	case "%":
		worse = dir*(v-b) - r.Allowed/100*math.Abs(b)
		if b != 0 {
			change = 100 * (v - b) / math.Abs(b)
			c.Change = &change
		}
	default: // pp, ms: absolute
		change = v - b
		c.Change = &change
		worse = dir*(v-b) - r.Allowed
	}
	switch {
	case worse <= 0:
		c.Verdict = GateHolds
	case worse <= c.Noise:
		c.Verdict, c.Why = GateInconclusive, fmt.Sprintf("past the allowance by %s, inside the interval of the difference (±%s)%s",
			num(worse), num(c.Noise), repeatsToDecide(bl.Run, cl.Run, worse, c.Noise))
	default:
		c.Verdict = GateFails
	}
	return c
}

// differenceNoise is the half-width of the 95% interval of the
// difference between two pooled runs' figure. When both repeated with
// the same seeds in the same order (the same schedules and prompt
// lengths: the same --seed), the repeats pair up, and the interval is
// Student's t over the paired differences, which the schedule's own
// noise does not widen; otherwise the two intervals add in quadrature.
func differenceNoise(b, c *Run, figure string) float64 {
	if d, ok := pairedDifferences(b.Repeats, c.Repeats, figure); ok {
		if iv, ok := IntervalOf(d); ok {
			return iv.HalfWidth
		}
	}
	return math.Hypot(halfWidth(b, figure), halfWidth(c, figure))
}

// pairedDifferences are the per-repeat differences of a figure when both
// runs repeated on the same seeds in the same order.
func pairedDifferences(b, c *Repeats, figure string) ([]float64, bool) {
	if b == nil || c == nil || len(b.Each) != len(c.Each) {
		return nil, false
	}
	d := make([]float64, len(b.Each))
	for i := range b.Each {
		vb, okB := b.Each[i].Figures[figure]
		vc, okC := c.Each[i].Figures[figure]
		if b.Each[i].Seed != c.Each[i].Seed || !okB || !okC {
			return nil, false
		}
		d[i] = vc - vb
	}
	return d, true
}

// halfWidth is a pooled run's interval half-width for a figure; zero
// for a run of one repeat.
func halfWidth(r *Run, figure string) float64 {
	if r.Repeats == nil {
		return 0
	}
	return r.Repeats.Intervals[figure].HalfWidth
}

// kneeCheck is a knee's rule: how many of the common levels the
// candidate's knee fell below the baseline's.
func kneeCheck(base, cand *Sweep, loads []float64, r GateRule) GateCheck {
	c := GateCheck{Rule: r.Text, Unit: "level"}
	pick := func(s *Sweep) (*Knee, *KneesAcross) {
		if r.Figure == "saturation" {
			return s.Knees.Saturation, repeatsKnee(s, func(rp *SweepRepeats) *KneesAcross { return &rp.Saturation })
		}
		return s.Knees.SLO, repeatsKnee(s, func(rp *SweepRepeats) *KneesAcross { return &rp.SLO })
	}
	// A knee's place among the common levels: none found is below the
	// first for the SLO knee (no level met it) and past the last for
	// saturation (throughput kept up at every level).
	none := -1
	if r.Figure == "saturation" {
		none = len(loads)
	}
	pos := func(load *float64) int {
		if load == nil {
			return none
		}
		n := 0
		for _, l := range loads {
			if l <= *load {
				n++
			}
		}
		return n - 1
	}
	loadOf := func(k *Knee) *float64 {
		if k == nil {
			return nil
		}
		v := k.Load
		return &v
	}
	bk, bAcross := pick(base)
	ck, cAcross := pick(cand)
	c.Baseline, c.Candidate = loadOf(bk), loadOf(ck)
	bp, cp := pos(c.Baseline), pos(c.Candidate)
	change := float64(cp - bp)
	c.Change = &change
	worse := float64(bp-cp) - r.Allowed
	// The candidate's best repeat against the baseline's worst.
	bWorst, cBest := bp, cp
	if bAcross != nil {
		for _, l := range bAcross.Loads {
			bWorst = min(bWorst, pos(l))
		}
	}
	if cAcross != nil {
		for _, l := range cAcross.Loads {
			cBest = max(cBest, pos(l))
		}
	}
	c.Noise = float64((bp - bWorst) + (cBest - cp))
	switch {
	case worse <= 0:
		c.Verdict = GateHolds
	case float64(bWorst-cBest)-r.Allowed <= 0:
		c.Verdict, c.Why = GateInconclusive, "some repeat of the candidate reached within the allowance of some repeat of the baseline: the repeats cannot tell it from noise"
	default:
		c.Verdict = GateFails
	}
	return c
}

func repeatsKnee(s *Sweep, of func(*SweepRepeats) *KneesAcross) *KneesAcross {
	if s.Repeats == nil {
		return nil
	}
	return of(s.Repeats)
}

// repeatsToDecide says about how many repeats each file would need for
// an interval narrow enough to tell a move of worse from noise: the
// half-width shrinks as one over the root of the repeats.
func repeatsToDecide(b, c *Run, worse, noise float64) string {
	n := 0
	for _, r := range []*Run{b, c} {
		if r.Repeats != nil && (n == 0 || r.Repeats.Count < n) {
			n = r.Repeats.Count
		}
	}
	if n == 0 || worse <= 0 {
		return ""
	}
	need := int(math.Ceil(float64(n) * (noise / worse) * (noise / worse)))
	return fmt.Sprintf("; about %d repeats each would decide it", max(need+1, n+1))
}

// num is a figure as a check's reasons say it.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
