package report

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kneebench/knee/results"
)

// WideColumns is the terminal width from which sweep rows show every
// column; narrower outputs get a layout that fits in 100 columns.
const WideColumns = 130

// SweepTable prints a sweep that is already complete (merged or
// predicted): the level table, then its knees. A live sweep prints its rows
// as levels finish instead.
func SweepTable(w io.Writer, s *results.Sweep, width int) {
	if s.Repeats != nil {
		PooledTable(w, s)
	} else {
		LevelHeader(w, s, width)
		for _, l := range s.Levels {
			LevelRow(w, s, l, width)
		}
		fmt.Fprintln(w)
	}
	LevelWarnings(w, s)
	GPULevels(w, s)
	Knees(w, s)
}

// LevelWarnings prints every level's warnings under the sweep table, one
// line each with its level named, so that none is only in the JSON.
func LevelWarnings(out io.Writer, s *results.Sweep) {
	w := newWrapWriter(out, 16)
	defer w.Flush()
	unit := axisUnit(s)
	any := false
	short := shortWindows(s)
	for _, l := range s.Levels {
		if l.Run == nil {
			continue
		}
		for _, text := range l.Run.Warnings {
			if short != "" && windowWarning(text) != "" {
				continue
			}
			fmt.Fprintf(w, "%-15s %s\n", fmt.Sprintf("warning %s", loadOf(l.Load, unit)), text)
			any = true
		}
	}
	if short != "" {
		fmt.Fprintf(w, "%-15s %s\n", "short windows", short)
		any = true
	}
	if any {
		fmt.Fprintln(w)
	}
}

// windowWarnings are the warnings a longer window answers, by how they
// open, each with a few words for it.
var windowWarnings = []struct{ opens, says string }{
	{"the latency percentiles rest on", "few requests"},
	{"the Poisson schedule drawn", "a drawn schedule off the rate asked"},
	{"the window (", "requests long against the window"},
}

// windowWarning is the few words for a warning a longer window answers
// ("" for any other).
func windowWarning(text string) string {
	for _, k := range windowWarnings {
		if strings.HasPrefix(text, k.opens) {
			return k.says
		}
	}
	return ""
}

var atLeast = regexp.MustCompile(`a window of at least ([0-9]+)s`)

// shortWindows says in one line which levels a longer window would read
// better and why, when two or more warnings say so ("" otherwise): the
// warnings are each level's in the JSON, and one cause is said once.
func shortWindows(s *results.Sweep) string {
	levels := map[string][]string{}
	n, longest := 0, 0
	for _, l := range s.Levels {
		if l.Run == nil {
			continue
		}
		for _, text := range l.Run.Warnings {
			says := windowWarning(text)
			if says == "" {
				continue
			}
			n++
			levels[says] = append(levels[says], loadOf(l.Load, axisUnit(s)))
			if m := atLeast.FindStringSubmatch(text); m != nil {
				v, _ := strconv.Atoi(m[1])
				longest = max(longest, v)
			}
		}
	}
	if n < 2 {
		return ""
	}
	var parts []string
	for _, k := range windowWarnings {
		if at := levels[k.says]; len(at) > 0 {
			parts = append(parts, k.says+" at "+strings.Join(at, ", "))
		}
	}
	window := "the windows"
	if d := s.Config.DurationS; d > 0 {
		window = "the " + time.Duration(d*float64(time.Second)).String() + " windows"
	}
	out := fmt.Sprintf("%s are short for some levels: %s (each level's words are in the JSON)",
		window, strings.Join(parts, "; "))
	if longest > 0 {
		out += fmt.Sprintf("; --duration %ds or more reads them reliably", longest)
	}
	return out
}

// axisUnit is the unit of a sweep's loads, as its text says them.
func axisUnit(s *results.Sweep) string {
	if s.Workload == "voice" && s.Axis == "rate" {
		return " calls/s"
	}
	return map[string]string{"rate": "/s", "concurrency": " streams"}[s.Axis]
}

// loadOf says a load with its unit: 4/s, 16 streams, 1 stream.
func loadOf(v float64, unit string) string {
	return strconv.FormatFloat(v, 'g', -1, 64) + results.LoadUnit(v, unit)
}

// LevelHeader is printed once before the first level row, for an output
// of the given width in columns.
func LevelHeader(w io.Writer, s *results.Sweep, width int) {
	// A pooling endpoint's latency is its whole answer's.
	lat := "TTFTs"
	if s.Config.Pooled() {
		lat = "E2Es"
	}
	if width >= WideColumns {
		fmt.Fprintf(w, "%-9s %8s %6s %9s %9s %9s %9s %8s %10s %7s %7s %6s %9s %s\n",
			s.Axis, "offered", "n", lat+" p50", lat+" p95", lat+" p99", "ITL p50", "tput/s", "out tok/s", "cache", "errors", "cut", "lag p99", "client")
		return
	}
	if callSweep(s) {
		// A call workload is read by its cache hits: they stay.
		fmt.Fprintf(w, "%-7s %7s %5s %9s %8s %8s %7s %6s %6s %6s %s\n",
			s.Axis, "offered", "n", lat+" p50", "p95", "p99", "tput/s", "cache", "errors", "cut", "client")
		return
	}
	fmt.Fprintf(w, "%-7s %7s %5s %9s %9s %9s %7s %6s %6s %s\n",
		s.Axis, "offered", "n", lat+" p50", "p95", "p99", "tput/s", "errors", "cut", "client")
}

// LevelRow prints one level as soon as it ends.
func LevelRow(w io.Writer, s *results.Sweep, l results.Level, width int) {
	if l.Run == nil {
		fmt.Fprintf(w, "%-9g FAILED: %s\n", l.Load, l.Error)
		return
	}
	c := levelCells(s, l)
	r, lat, q := l.Run, c.lat, c.q
	if width >= WideColumns {
		fmt.Fprintf(w, "%-9g %8s %6s %9s %9s %9s %9s %8s %10s %7s %7s %6s %9s %s\n",
			l.Load, c.offered, c.count, q(lat, lat.P50), q(lat, lat.P95), q(lat, lat.P99), q(r.Stats.ITL, r.Stats.ITL.P50),
			num(c.tput, 2), num(r.Throughput.OutputTokensPerS, 0), c.cache, pct(r.Requests.ErrorRate()), c.cut, c.lag, c.health)
		return
	}
	if callSweep(s) {
		fmt.Fprintf(w, "%-7g %7s %5s %9s %8s %8s %7s %6s %6s %6s %s\n",
			l.Load, c.offered, c.count, q(lat, lat.P50), q(lat, lat.P95), q(lat, lat.P99),
			num(c.tput, 2), c.cache, pct(r.Requests.ErrorRate()), c.cut, c.health)
		return
	}
	fmt.Fprintf(w, "%-7g %7s %5s %9s %9s %9s %7s %6s %6s %s\n",
		l.Load, c.offered, c.count, q(lat, lat.P50), q(lat, lat.P95), q(lat, lat.P99),
		num(c.tput, 2), pct(r.Requests.ErrorRate()), c.cut, c.health)
}

// rowCells are a measured level's cells, formatted.
type rowCells struct {
	lat                                     results.Summary
	tput                                    float64
	offered, count, cache, lag, cut, health string
	q                                       func(results.Summary, float64) string
}

// levelCells formats a measured level's cells: its latency (E2E for a
// pooling endpoint, else TTFT, from the schedule), throughput, cache, the
// simulator's lag, what was cut, and the client's verdict with notes.
func levelCells(s *results.Sweep, l results.Level) rowCells {
	r := l.Run
	c := rowCells{tput: r.Throughput.RequestsPerS, cache: "-", lag: "-", cut: "-", health: r.Health.Verdict, lat: r.Stats.TTFTSched}
	if r.Calls != nil {
		c.tput = r.Calls.TurnsPerS
	}
	if r.Cache != nil && r.Cache.Reported {
		c.cache = pct(r.Cache.HitRate)
	}
	if r.Server != nil && r.Server.Lag != nil {
		c.lag = ms(r.Server.Lag.P99)
	}
	if r.Interrupted {
		c.health += ", interrupted"
	}
	if s.Config.Pooled() {
		c.lat = r.Stats.E2ESched
	}
	// A distribution with no samples has no percentiles: "-", never 0.
	c.q = func(s results.Summary, v float64) string {
		if s.Count == 0 {
			return "-"
		}
		return ms(v)
	}
	c.offered = offeredText(r)
	c.count = num(float64(r.Requests.OK+r.Requests.Failed), 0)
	if c.lat.Count > 0 && c.lat.Count < 20 {
		// p95 of fewer than 20 samples is the largest one seen.
		c.count += "*"
	}
	// Cut and unsent requests are in no percentile: say how many, and
	// that the level's latencies read low when they are more than a few.
	if cut, u := r.Missing(); cut+u > 0 {
		c.cut = pct(r.MissingShare())
	}
	if excl := excluded(s, l.Load); excl != "" {
		c.health += " · excluded"
	}
	if g := r.Goodput; g != nil {
		c.health += " · good " + pct(g.Share)
	}
	return c
}

// Compare prints the knees and peak throughputs of several sweeps side by
// side.
func Compare(w io.Writer, sweeps []*results.Sweep) error {
	header := []string{""}
	for _, s := range sweeps {
		header = append(header, s.Label)
	}
	knee := func(k *results.Knee) string {
		if k == nil {
			return "none"
		}
		return fmt.Sprintf("%g", k.Load)
	}
	rows := [][]string{{"workload"}, {"axis"}, {"SLO"}, {"SLO knee"}, {"curvature knee"}, {"saturation"}, {"peak throughput/s"}, {"peak output tok/s"}, {"levels"}}
	for _, s := range sweeps {
		// A peak is read only from levels the knees use: a client-limited
		// or interrupted level's figures are not the server's.
		peak, peakTok := 0.0, 0.0
		for _, l := range s.Levels {
			if l.Run == nil || excluded(s, l.Load) != "" {
				continue
			}
			t := l.Run.Throughput.RequestsPerS
			if l.Run.Calls != nil {
				t = l.Run.Calls.TurnsPerS
			}
			peak = max(peak, t)
			peakTok = max(peakTok, l.Run.Throughput.OutputTokensPerS)
		}
		cells := []string{s.Workload, s.Axis, sloText(s.SLO),
			sloKneeCell(s), knee(s.Knees.Curvature), knee(s.Knees.Saturation), num(peak, 2), num(peakTok, 0), fmt.Sprint(len(s.Levels))}
		for i := range rows {
			rows[i] = append(rows[i], cells[i])
		}
	}
	if err := renderTable(w, header, rows); err != nil {
		return err
	}
	for _, warn := range CompareWarnings(sweeps) {
		Wrap(w, 9, "warning  "+warn+"\n")
	}
	return nil
}

func sloText(o results.SLO) string { return o.BoundsText() }

// CompareWarnings says where compared sweeps differ in what they measured:
// workload, model, prompt and output sizes, axis, or window.
func CompareWarnings(sweeps []*results.Sweep) []string {
	var out []string
	differ := func(what string, value func(*results.Sweep) string) {
		seen := map[string]bool{}
		var vals []string
		for _, s := range sweeps {
			v := value(s)
			if !seen[v] {
				seen[v] = true
				vals = append(vals, fmt.Sprintf("%s: %s", s.Label, v))
			}
		}
		if len(seen) > 1 {
			out = append(out, fmt.Sprintf("the sweeps differ in %s (%s): their curves are overlaid but measure different things", what, strings.Join(vals, "; ")))
		}
	}
	differ("workload", func(s *results.Sweep) string { return s.Workload })
	differ("axis", func(s *results.Sweep) string { return s.Axis })
	differ("model", func(s *results.Sweep) string { return s.Config.Model })
	differ("token sizes", func(s *results.Sweep) string {
		c := s.Config
		if c.Voice != nil {
			return fmt.Sprintf("%d-token system prompt, %d output", c.Voice.SystemPromptTokens, c.Voice.OutputTokens)
		}
		if c.Dataset != "" {
			return "dataset " + c.Dataset
		}
		return fmt.Sprintf("%d in, %d out", c.InputTokens, c.MaxTokens)
	})
	differ("window", func(s *results.Sweep) string {
		switch {
		case s.Config.DurationS > 0:
			return fmt.Sprintf("%g s", s.Config.DurationS)
		case s.Config.Requests > 0:
			return results.Plural(s.Config.Requests, "request")
		}
		return "unknown"
	})
	return out
}

// judgedLevels counts the levels whose latencies the knees used.
func judgedLevels(s *results.Sweep) int {
	return len(s.Levels) - len(s.Knees.Excluded)
}

// saturationJudged counts the levels saturation was judged on: those
// judged, and those left out only for their missing requests.
func saturationJudged(s *results.Sweep) int {
	n := judgedLevels(s)
	for _, e := range s.Knees.Excluded {
		if e.Saturation {
			n++
		}
	}
	return n
}

// sloKneeCell is a sweep's SLO knee in a comparison: a knee never crossed
// is a lower bound, not a limit.
func sloKneeCell(s *results.Sweep) string {
	k := s.Knees.SLO
	switch {
	case k == nil:
		return "none"
	case s.Knees.SLONotReached:
		return fmt.Sprintf("not reached (≥ %g)", k.Load)
	}
	return fmt.Sprintf("%g", k.Load)
}

// seconds says a time in ms as seconds, to a tenth.
func seconds(ms float64) string { return fmt.Sprintf("%.1f s", ms/1000) }

// callSweep reports whether a sweep's levels are calls (voice, or a
// dataset's conversations).
func callSweep(s *results.Sweep) bool {
	return s.Workload == "voice" || s.Workload == "conversations"
}
