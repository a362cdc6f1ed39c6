package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/kneebench/knee/results"
)

// twoRepeats says why two repeats' intervals are wide.
const twoRepeats = "two repeats leave one degree of freedom: the intervals are 12.7 standard errors wide each way; three repeats bring that to 4.3, five to 2.8"

// RepeatRow prints level l of repeat rep (from 0) of n as it ends, under
// a line naming the repeat before its first level.
func RepeatRow(w io.Writer, s *results.Sweep, rep, n int, l results.Level, width int) {
	if len(s.Levels) > 0 && l.Load == s.Levels[0].Load {
		fmt.Fprintf(w, "repeat %d of %d (its own seed and prompts):\n", rep+1, n)
	}
	LevelRow(w, s, l, width)
}

// PooledTable prints a repeated sweep's pooled levels: each figure with
// the half-width of its 95% interval across the repeats.
func PooledTable(w io.Writer, s *results.Sweep) {
	metric := s.Config.Latency()
	name := map[string]string{"ttft_sched": "TTFTs", "e2e_sched": "E2Es"}[metric]
	n := 0
	if s.Repeats != nil {
		n = s.Repeats.Count
	}
	fmt.Fprintf(w, "pooled over %d repeats: each figure is of every repeat's requests together; ± is half its 95%% interval across the repeats (Student's t, one value per repeat)\n", n)
	if n == 2 {
		fmt.Fprintln(w, twoRepeats)
	}
	if everyLevelSame(s) {
		Wrap(w, 0, results.SameNote+"\n")
	}
	header := []string{s.Axis, "repeats", "n", name + " p50", name + " p95", name + " p99", "ITL p50", "tput/s", "errors", "client"}
	var rows [][]string
	for _, l := range s.Levels {
		if l.Run == nil {
			rows = append(rows, []string{fmt.Sprintf("%g", l.Load), "-", "FAILED: " + l.Error, "", "", "", "", "", "", ""})
			continue
		}
		r := l.Run
		st, _ := r.Stats.SummaryOf(metric)
		fig := func(key string, v float64, count int64, format func(float64) string) string {
			if count == 0 {
				return "-"
			}
			if plus := r.Repeats.Plus(key, format); plus != "" {
				return format(v) + " " + plus
			}
			return format(v)
		}
		repeats := "1"
		if r.Repeats != nil {
			repeats = fmt.Sprint(r.Repeats.Count)
		}
		twoPlaces := func(v float64) string { return num(v, 2) }
		errPct := func(v float64) string { return fmt.Sprintf("%.1f%%", v) }
		health := r.Health.Verdict
		if excl := excluded(s, l.Load); excl != "" {
			health += " · excluded"
		}
		rows = append(rows, []string{fmt.Sprintf("%g", l.Load), repeats, num(float64(r.Requests.OK+r.Requests.Failed), 0),
			fig(metric+".p50", st.P50, st.Count, ms), fig(metric+".p95", st.P95, st.Count, ms), fig(metric+".p99", st.P99, st.Count, ms),
			fig("itl.p50", r.Stats.ITL.P50, r.Stats.ITL.Count, ms), fig("throughput", r.Throughput.RequestsPerS, 1, twoPlaces),
			fig("errors", 100*r.Requests.ErrorRate(), 1, errPct), health})
	}
	if err := renderTable(w, header, rows); err != nil {
		fmt.Fprintf(w, "(table: %v)\n", err)
	}
	fmt.Fprintln(w)
}

// everyLevelSame says every repeat gave every level the same figures.
func everyLevelSame(s *results.Sweep) bool {
	any := false
	for _, l := range s.Levels {
		if l.Run == nil {
			continue
		}
		if !l.Run.Repeats.Same() {
			return false
		}
		any = true
	}
	return any
}

// repeatKnees prints where each knee fell across a repeated sweep's
// repeats.
func repeatKnees(w io.Writer, s *results.Sweep, unit string) {
	rp := s.Repeats
	if rp == nil {
		return
	}
	fmt.Fprintf(w, "across repeats  SLO knee %s; saturation %s. Each repeat's knees are found on its own levels; those above are the pooled levels'.\n",
		rp.SLO.Range(unit), rp.Saturation.Range(unit))
	if d := kneeDisagreement(s, unit); d != "" {
		fmt.Fprintf(w, "                %s\n", d)
	}
	for _, name := range slices.Sorted(maps.Keys(rp.Classes)) {
		fmt.Fprintf(w, "across repeats  class %s's knee %s\n", name, rp.Classes[name].Range(unit))
	}
	if rp.Passes < rp.Count {
		fmt.Fprintf(w, "                only %d of the %d repeats ran: the sweep was cut.\n", rp.Passes, rp.Count)
	}
}

// kneeDisagreement says when the pooled levels' SLO knee and the
// repeats' own disagree ("" when they do not): pooled percentiles are of
// every repeat's requests together, and can meet the SLO where no repeat
// alone did. The lower knee is the one to plan on.
func kneeDisagreement(s *results.Sweep, unit string) string {
	low := s.Repeats.SLO.Low
	if low == nil {
		return ""
	}
	k := s.Knees.SLO
	switch {
	case k == nil || s.Knees.SLONotReached:
		return fmt.Sprintf("The pooled levels reach no SLO knee where the repeats found one (from %s): pooled percentiles mix every repeat's requests and can meet the SLO where no repeat alone did. Plan on the repeats' knee.", loadOf(*low, unit))
	case *low < k.Load:
		return fmt.Sprintf("Some repeat's SLO knee (%s) fell below the pooled levels' (%s): plan on the lower.", loadOf(*low, unit), loadOf(k.Load, unit))
	}
	return ""
}

// RepeatLine is one repeat of a run in a line, as it ends.
func RepeatLine(r *results.Run) string {
	f := results.Figures(r)
	line := fmt.Sprintf("%d requests, %s req/s", r.Requests.OK+r.Requests.Failed, num(f["throughput"], 2))
	for _, name := range []string{"ttft_sched.p50", "ttft_sched.p95", "e2e_sched.p95"} {
		if v, ok := f[name]; ok {
			line += fmt.Sprintf(", %s %s ms", name, ms(v))
		}
	}
	return line + ", client " + r.Health.Verdict
}

// repeatedFigures are the figures a repeated run's table shows.
var repeatedFigures = []string{"ttft_sched.p50", "ttft_sched.p95", "ttft_sched.p99", "ttft.p95", "itl.p50", "itl.p95", "tpot.p50",
	"e2e_sched.p50", "e2e_sched.p95", "e2e_sched.p99", "throughput", "output_tokens_per_s", "goodput", "errors", "joules_per_output_token"}

// RepeatFigures prints a repeated run's figures: the pooled value, the
// mean of the repeats with its 95% interval, and each repeat's own.
func RepeatFigures(w io.Writer, r *results.Run) error {
	rp := r.Repeats
	fmt.Fprintf(w, "\nrepeats: %d, each from its own seed and prompts; the interval is %s\n", rp.Count, rp.Method)
	if rp.Count == 2 {
		fmt.Fprintln(w, twoRepeats)
	}
	header := []string{"figure", "pooled", "mean ± 95%"}
	for i, e := range rp.Each {
		header = append(header, fmt.Sprintf("#%d (seed %d)", i+1, e.Seed))
	}
	pooled := results.Figures(r)
	var rows [][]string
	for _, name := range repeatedFigures {
		iv, ok := rp.Intervals[name]
		if !ok {
			continue
		}
		format := ms
		switch name {
		case "throughput", "output_tokens_per_s", "goodput":
			format = func(v float64) string { return num(v, 2) }
		case "errors":
			format = func(v float64) string { return fmt.Sprintf("%.2f%%", v) }
		case "joules_per_output_token":
			format = func(v float64) string { return fmt.Sprintf("%.4f", v) }
		}
		row := []string{name, format(pooled[name]), format(iv.Mean) + " ± " + format(iv.HalfWidth)}
		for _, e := range rp.Each {
			row = append(row, format(e.Figures[name]))
		}
		rows = append(rows, row)
	}
	if err := renderTable(w, header, rows); err != nil {
		return err
	}
	return serverAcrossRepeats(w, rp)
}

// serverAcrossRepeats prints the server's own figures that every repeat's
// server gave exactly: the mean with its interval, and each repeat's.
func serverAcrossRepeats(w io.Writer, rp *results.Repeats) error {
	if len(rp.ServerIntervals) == 0 {
		return nil
	}
	header := []string{"server's figure", "mean ± 95%"}
	for i := range rp.Each {
		header = append(header, fmt.Sprintf("#%d", i+1))
	}
	var rows [][]string
	for _, name := range slices.Sorted(maps.Keys(rp.ServerIntervals)) {
		iv := rp.ServerIntervals[name]
		row := []string{name, ms(iv.Mean) + " ± " + ms(iv.HalfWidth)}
		for _, e := range rp.Each {
			v := serverFigure(e.Server, name)
			if math.IsNaN(v) {
				row = append(row, "-")
				continue
			}
			row = append(row, ms(v))
		}
		rows = append(rows, row)
	}
	fmt.Fprintln(w, "\nthe server's own account, repeat by repeat (not pooled: each read its own; a percentile it knows only within a bucket has no interval):")
	return renderTable(w, header, rows)
}

// serverFigure is the server's value of the named figure in its view.
func serverFigure(s *results.Server, name string) float64 {
	if s == nil {
		return math.NaN()
	}
	for _, f := range s.Figures {
		if f.Name == name && f.Server != nil {
			return *f.Server
		}
	}
	return math.NaN()
}
