package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kneebench/knee/results"
)

// Knees explains the knees of a sweep, wrapped to ReportColumns.
func Knees(out io.Writer, s *results.Sweep) {
	w := newWrapWriter(out, 16)
	defer w.Flush()
	unit := axisUnit(s)
	judged := judgedLevels(s)
	slo := fmt.Sprintf("%s with errors under %g%%", s.SLO.BoundsText(), 100*s.SLO.MaxErrorRate)
	there := func(v float64) string { return fmt.Sprintf("%.1f ms there", v) }
	if s.SLO.Metric() == "goodput" {
		slo = fmt.Sprintf("goodput of at least %g%% with errors under %g%%", s.SLO.MinGoodPercent, 100*s.SLO.MaxErrorRate)
		there = func(v float64) string { return fmt.Sprintf("%.1f%% good there", 100-v) }
	}
	switch k := s.Knees.SLO; {
	case judged == 0:
		fmt.Fprintln(w, "SLO knee        none — no level could be judged: every level was left out (see below).")
	case k != nil && s.Knees.SLONotReached:
		fmt.Fprintf(w, "SLO knee        not reached — every level judged, up to %s, met %s (%s): the limit lies above the levels measured; "+
			"add higher levels to find it.\n", loadOf(k.Load, unit), slo, there(*k.LatencyMs))
	case k != nil:
		fmt.Fprintf(w, "SLO knee        %s — the largest load meeting %s (%s). Provision against this.\n", loadOf(k.Load, unit), slo, there(*k.LatencyMs))
		fmt.Fprint(w, pastKnee(s, k.Index, unit))
	default:
		fmt.Fprintf(w, "SLO knee        none — even the lowest level judged misses %s.\n", slo)
	}
	if k := s.Knees.Curvature; k != nil {
		fmt.Fprintf(w, "curvature knee  %s — where the %s p%g curve bends from flat to steep (Kneedle), whatever the SLO.\n", loadOf(k.Load, unit), s.SLO.Metric(), s.SLO.Percentile())
	} else {
		switch results.CurveShape(s.Knees.CurveShape) {
		case results.CurveFlat:
			fmt.Fprintf(w, "curvature knee  none — flat: %s p%g at the highest load is not materially above the lowest "+
				"(a rise of under %g%% of it, or under %g%% of the SLO).\n", s.SLO.Metric(), s.SLO.Percentile(), 100*results.MinRiseOfBase, 100*results.MinRiseOfSLO)
		case results.CurveFewer:
			fmt.Fprintln(w, "curvature knee  none — fewer than three levels could be used.")
		default:
			fmt.Fprintln(w, "curvature knee  none — the curve does not bend within the levels measured.")
		}
	}
	switch k := s.Knees.Saturation; {
	case k != nil:
		how := "achieved throughput fell behind the offered load"
		if k.Index >= 0 && k.Index < len(s.Levels) {
			if l := s.Levels[k.Index]; l.Run != nil && s.Axis == "rate" && results.QueueGrowth(l.Run.Arrivals) >= results.QueueGrowthWeak {
				a := l.Run.Arrivals
				how = fmt.Sprintf("the server fell behind the offered load: its queue grew through the window (requests took %s in its first third, %s in its last)",
					seconds(a.AgeFirstThirdMs), seconds(a.AgeLastThirdMs))
			}
		}
		fmt.Fprintf(w, "saturation      %s — the first level where %s.\n", loadOf(k.Load, unit), how)
	case saturationJudged(s) == 0:
		fmt.Fprintln(w, "saturation      none found — no level could be judged (see below).")
	case len(s.Knees.Overruled) > 0:
		fmt.Fprintln(w, "saturation      none — every level that fell behind its offer was outpaced by a heavier one that kept up (below).")
	case len(s.Knees.Excluded) > 0:
		fmt.Fprintln(w, "saturation      none — throughput kept up with the offered load at every level judged (those left out are below).")
	default:
		fmt.Fprintln(w, "saturation      none — throughput kept up with the offered load at every level.")
	}
	classKnees(w, s, unit)
	repeatKnees(w, s, unit)
	for _, e := range s.Knees.Excluded {
		fmt.Fprintf(w, "excluded        %s — %s\n", loadOf(e.Load, unit), e.Reason)
	}
	for _, e := range s.Knees.Overruled {
		fmt.Fprintf(w, "not saturation  %s — %s\n", loadOf(e.Load, unit), e.Reason)
	}
	for _, e := range s.Knees.JudgedUnhealthy {
		fmt.Fprintf(w, "judged anyway   %s — --health-policy warn kept it in the knees: %s\n", loadOf(e.Load, unit), e.Reason)
	}
	if s.Interrupted {
		fmt.Fprintln(w, "interrupted     the sweep was stopped; the results hold the levels measured.")
	}
}

// pastKnee says why the first level judged past the SLO knee at i missed,
// and which heavier levels met the SLO again (a miss between passes is
// worth measuring again before it is planned on).
func pastKnee(s *results.Sweep, i int, unit string) string {
	var b strings.Builder
	var again []string
	for _, l := range s.Levels[i+1:] {
		switch v := l.Verdict; {
		case v == nil || !v.Judged:
		case b.Len() == 0 && !v.Meets:
			fmt.Fprintf(&b, "                The next level judged, %s, missed: %s", loadOf(l.Load, unit), v.Why)
		case b.Len() > 0 && v.Meets:
			again = append(again, loadOf(l.Load, unit))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	if len(again) > 0 {
		fmt.Fprintf(&b, "; yet %s met the SLO again: measure the level that missed again (--repeat) before planning on the knee",
			strings.Join(again, ", "))
	}
	return b.String() + ".\n"
}
