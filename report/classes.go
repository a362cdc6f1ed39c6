package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kneebench/knee/results"
)

// classesTable writes a mix's classes side by side: each one's share of
// the requests (asked and sent), its outcome, its latencies from the
// scheduled arrival, its throughput and its own SLO's verdict.
func classesTable(w io.Writer, r *results.Run) error {
	if len(r.Classes) == 0 {
		return nil
	}
	names, rows := classOrder(r), classRows(r)
	fmt.Fprintln(w, "classes  share asked / sent; latencies in ms from the scheduled arrival; goodput and SLO against the class's own")
	if err := renderTable(w, classHeader, rows); err != nil {
		return err
	}
	if f := r.Fairness; f != nil {
		fmt.Fprintf(w, "         fairness %.3f (Jain's index over the classes' goodput: 1 when all fare alike)\n", *f)
	}
	for _, name := range names {
		if mc := r.Classes[name].MixClass; mc != nil && mc.MetSLO != nil && !*mc.MetSLO {
			fmt.Fprintf(w, "         %s missed %s\n", name, strings.Join(mc.Missed, "; "))
		}
	}
	for _, line := range loraCauses(r, names) {
		fmt.Fprintln(w, "         "+line)
	}
	return nil
}

// loraCauses says, beside a mix's classes, what the LoRA slots did to
// each class served by an adapter: how often its requests waited for a
// slot, and how many adapters were loaded (swapped) into the slots — the
// why of a class slower than its neighbours.
func loraCauses(r *results.Run, names []string) []string {
	if r.Server == nil || r.Server.LoRA == nil || r.Server.LoRA.Samples == 0 && r.Server.LoRA.Loads == nil {
		return nil
	}
	l := r.Server.LoRA
	var out []string
	for _, name := range names {
		mc := r.Classes[name].MixClass
		if mc == nil || mc.Model == "" || !slices.Contains(l.Running, mc.Model) && l.WaitingSamples[mc.Model] == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s (adapter %s): its requests waited for a slot in %d of %d samples of the server's LoRA state",
			name, mc.Model, l.WaitingSamples[mc.Model], l.Samples))
	}
	if l.Loads != nil {
		out = append(out, fmt.Sprintf("adapters: %d slot(s); %d loaded into a slot over the window (a load when the slots were full is a swap)", l.MaxLoRAs, *l.Loads))
	}
	return out
}

// classHeader heads the classes' table.
var classHeader = []string{"class", "share", "ok", "failed", "TTFT p50", "TTFT p95", "E2E p95", "tok/s", "good", "SLO"}

// classesHTML is the classes' table for a run's page (nil without a mix).
func classesHTML(r *results.Run) *htmlTable {
	if len(r.Classes) == 0 {
		return nil
	}
	t := &htmlTable{Header: classHeader}
	for _, row := range classRows(r) {
		t.Rows = append(t.Rows, htmlRow{Cells: row})
	}
	return t
}

// classRows are the classes' rows, largest share first.
func classRows(r *results.Run) [][]string {
	names := classOrder(r)
	total := max(r.Requests.Sent, 1)
	rows := make([][]string, 0, len(names))
	for _, name := range names {
		c := r.Classes[name]
		share, verdict := "-", "-"
		if mc := c.MixClass; mc != nil {
			share = pct(mc.Share)
			switch {
			case mc.MetSLO == nil:
			case *mc.MetSLO:
				verdict = "met"
			default:
				verdict = "MISSED"
			}
		}
		good := "-"
		if g := c.Goodput; g != nil {
			good = pct(g.Share)
		}
		rows = append(rows, []string{name, share + " / " + pct(float64(c.Requests.Sent)/float64(total)), num(float64(c.Requests.OK), 0), num(float64(c.Requests.Failed), 0),
			ms(c.Stats.TTFTSched.P50), ms(c.Stats.TTFTSched.P95), ms(c.Stats.E2ESched.P95), num(c.Throughput.OutputTokensPerS, 1), good, verdict})
	}
	return rows
}

// classOrder is the classes by share, largest first, then by name.
func classOrder(r *results.Run) []string {
	names := make([]string, 0, len(r.Classes))
	for n := range r.Classes {
		names = append(names, n)
	}
	share := func(n string) float64 {
		if mc := r.Classes[n].MixClass; mc != nil {
			return mc.Share
		}
		return 0
	}
	slices.SortFunc(names, func(a, b string) int {
		if sa, sb := share(a), share(b); sa != sb {
			if sa > sb {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return names
}

// classKnees writes a mix's classes' own knees, side by side, and which
// class degraded first.
func classKnees(w io.Writer, s *results.Sweep, unit string) {
	for _, ck := range s.ClassKnees {
		if ck.Judged == 0 {
			fmt.Fprintf(w, "class knee      %s: not judged — it finished no request at any level judged, so no level can say whether it met %s; give it a larger share, a higher load or a longer window\n", ck.Class, ck.SLO)
			continue
		}
		knee := "none — it missed its SLO at the lightest load judged"
		if ck.Knee != nil {
			knee = loadOf(ck.Knee.Load, unit)
			if ck.Knee.LatencyMs != nil {
				knee += fmt.Sprintf(" (%s ms there)", ms(*ck.Knee.LatencyMs))
			}
		}
		missed := "met it at every level judged"
		if ck.FirstMissed != nil {
			missed = fmt.Sprintf("first missed at %s", loadOf(*ck.FirstMissed, unit))
		}
		fmt.Fprintf(w, "class knee      %s: %s — the largest load meeting %s; %s\n", ck.Class, knee, ck.SLO, missed)
	}
	if s.DegradedFirst != "" {
		fmt.Fprintf(w, "degraded first  %s\n", s.DegradedFirst)
	}
	if in := s.Interference; in != nil {
		for _, r := range in.Rows {
			line := fmt.Sprintf("interference    raising %s moved %s's TTFT sched p95 from %s to %s ms (%+.1f ms per 1%s)",
				in.Varied, r.Class, ms(r.TTFTSchedP95From), ms(r.TTFTSchedP95To), r.TTFTSchedP95Slope, unit)
			if g := r.GoodputSlope; g != nil {
				line += fmt.Sprintf(", its goodput %+.1f points per 1%s", 100**g, unit)
			}
			fmt.Fprintln(w, line)
		}
	}
}
