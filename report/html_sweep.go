package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/results"
)

type htmlSweep struct {
	Index    int
	Label    string
	Facts    []fact
	Knees    []string
	Levels   *htmlTable
	Details  []htmlLevel
	Warnings []string
	Notes    []string
}

// htmlLevel is one level's small print: its client health, server view,
// calls and per-turn table, warnings and notes.
type htmlLevel struct {
	Title           string
	Health          string
	Limited         bool
	Server, Turns   *htmlTable
	ServerTitle     string
	Calls           string
	Warnings, Notes []string
}

func sweepSection(s *results.Sweep, idx int) htmlSweep {
	hs := htmlSweep{Index: idx, Label: s.Label, Facts: sweepFacts(s)}
	var kb bytes.Buffer
	Knees(&kb, s)
	for _, line := range strings.Split(strings.TrimSpace(kb.String()), "\n") {
		if strings.HasPrefix(line, " ") && len(hs.Knees) > 0 {
			hs.Knees[len(hs.Knees)-1] += " " + strings.TrimSpace(line)
			continue
		}
		hs.Knees = append(hs.Knees, strings.Join(strings.Fields(line), " "))
	}
	unit := axisUnit(s)
	tokens, perJ := s.Config.Tokens()+" tok/s", "J / output tok"
	if s.Config.Pooled() {
		perJ = "J / request" // (it generates no token)
	}
	hs.Levels = &htmlTable{Header: []string{s.Axis, "offered", "n", "TTFT sched p50", "p95", "p99", "TTFT p95", "TPOT p50", "ITL p50",
		"E2E p95", "completions/s", tokens, "errors", "cut or unsent", "good", "cache hit", "client"}}
	energy := slices.ContainsFunc(s.Levels, func(l results.Level) bool { return l.Run != nil && l.Run.GPU != nil && len(l.Run.GPU.GPUs) > 0 })
	if energy {
		hs.Levels.Header = append(hs.Levels.Header, perJ)
	}
	for _, l := range s.Levels {
		load := num(l.Load, -1) + results.LoadUnit(l.Load, unit)
		if l.Run == nil {
			hs.Levels.Rows = append(hs.Levels.Rows, htmlRow{Class: "excluded", Cells: []string{load}, Note: "the level failed: " + l.Error})
			continue
		}
		row := htmlLevelRow(l.Run, load, energy)
		if why := excluded(s, l.Load); why != "" {
			row.Class, row.Note = "excluded", "left out of the knees: "+why
		}
		hs.Levels.Rows = append(hs.Levels.Rows, row)
		hs.Details = append(hs.Details, levelDetails(l.Run, "level "+load))
	}
	hs.Warnings = append(hs.Warnings, CompareWarnings([]*results.Sweep{s})...)
	return hs
}

// sweepFacts is what was measured how: target, workload, window, SLO,
// repeats, and what predicted it when it was predicted.
func sweepFacts(s *results.Sweep) []fact {
	c := s.Config
	out := facts(
		fact{"target", targetOf(c)}, fact{"model", joinSome(" · ", c.Model, suffixed(c.Endpoint, " endpoint"))},
		fact{"workload", s.Workload + " · asked: " + sizesOf(c) + measuredSizes(s)},
		fact{"axis", s.Axis + " · " + results.Plural(len(s.Levels), "level")},
		fact{"window", windowOf(s)},
		fact{"SLO", sloText(s.SLO) + fmt.Sprintf(", errors under %g%%", 100*s.SLO.MaxErrorRate)},
		fact{"seed", fmt.Sprint(c.Seed)},
	)
	if !s.StartedAt.IsZero() {
		out = append(out, fact{"started", s.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")})
	}
	if e := s.Environment; e.KneeVersion != "" {
		out = append(out, fact{"measured with", fmt.Sprintf("knee %s on %s/%s, %d CPUs", e.KneeVersion, e.OS, e.Arch, e.CPUs)})
	}
	if rp := s.Repeats; rp != nil {
		out = append(out, fact{"repeats", fmt.Sprintf("every level measured %d times, interleaved, each from its own seed and prompts; "+
			"figures are pooled over them, ± is half the %s", rp.Count, results.RepeatMethod)})
	}
	if s.HealthPolicy != "" {
		out = append(out, fact{"health policy", s.HealthPolicy})
	}
	if pr := s.Prediction; pr != nil {
		out = append(out, predictionFacts(pr)...)
	}
	return out
}

// predictionFacts is what a predicted sweep was predicted on.
func predictionFacts(pr *results.Prediction) []fact {
	what := pr.Model
	if pr.Preset != "" {
		what = pr.Preset
	}
	if pr.Replicas > 1 {
		what = fmt.Sprintf("%d replicas of %s behind a %s router", pr.Replicas, what, pr.Routing)
	}
	out := []fact{{"predicted", what + ", in virtual time on the simulator's scheduler core"}}
	if pr.KVSequences > 0 {
		out = append(out, fact{"KV cache", fmt.Sprintf("%s blocks of %d tokens per replica: %s sequences of the workload's %s tokens",
			num(float64(pr.KVBlocks), 0), pr.KVBlockTokens, num(float64(pr.KVSequences), 0), num(pr.KVSequenceTokens, 0))})
	}
	if pr.Fit != "" {
		out = append(out, fact{"fit", pr.Fit})
	}
	return out
}

// htmlLevelRow is a measured level's row of the page's levels table.
func htmlLevelRow(r *results.Run, load string, energy bool) htmlRow {
	// A repeated level's figures carry their 95% interval.
	plus := func(key string, text string, format func(float64) string) string {
		if p := r.Repeats.Plus(key, format); p != "" {
			return text + " " + p
		}
		return text
	}
	q := func(sum results.Summary, v float64, key string) string {
		if sum.Count == 0 {
			return "-"
		}
		return plus(key, ms(v), ms)
	}
	tput := r.Throughput.RequestsPerS
	if r.Calls != nil {
		tput = r.Calls.TurnsPerS
	}
	good, hit, cut := "-", "-", "-"
	if r.Goodput != nil {
		good = pct(r.Goodput.Share)
	}
	if ca := r.Cache; ca != nil && ca.Reported {
		hit = pct(ca.HitRate)
	}
	if c, u := r.Missing(); c+u > 0 {
		cut = fmt.Sprintf("%s (%d cut, %d unsent)", pct(r.MissingShare()), c, u)
	}
	st := r.Stats
	row := htmlRow{Cells: []string{load, offeredText(r), num(float64(r.Requests.OK+r.Requests.Failed), 0),
		q(st.TTFTSched, st.TTFTSched.P50, "ttft_sched.p50"), q(st.TTFTSched, st.TTFTSched.P95, "ttft_sched.p95"),
		q(st.TTFTSched, st.TTFTSched.P99, "ttft_sched.p99"), q(st.TTFT, st.TTFT.P95, "ttft.p95"),
		q(st.TPOT, st.TPOT.P50, "tpot.p50"), q(st.ITL, st.ITL.P50, "itl.p50"), q(st.E2E, st.E2E.P95, "e2e.p95"),
		plus("throughput", num(tput, 2), func(v float64) string { return num(v, 2) }), num(r.TokensPerS(), 0),
		pct(r.Requests.ErrorRate()), cut, good, hit, r.Health.Verdict}}
	if energy {
		j := "-"
		if g := r.GPU; g != nil && len(g.GPUs) > 0 {
			j = num(g.JoulesPerOutputToken, 4)
			if r.Config.Pooled() {
				j = num(g.JoulesPerRequest, 1)
			}
		}
		row.Cells = append(row.Cells, j)
	}
	return row
}

// levelDetails is a level's (or a run's) small print.
func levelDetails(r *results.Run, title string) htmlLevel {
	hl := htmlLevel{Title: title, Warnings: r.Warnings, Notes: r.Notes}
	h := r.Health
	hl.Limited = !h.Healthy()
	hl.Health = fmt.Sprintf("%s · timer lag p99 %s ms · sends late %d · CPU %.0f%% · GC %d", h.Verdict, ms(h.TimerLagP99Ms), r.Arrivals.LateSends, h.CPUPercent, h.NumGC)
	if len(h.Reasons) > 0 {
		hl.Health += " — " + strings.Join(h.Reasons, "; ")
	}
	if sv := r.Server; sv != nil {
		hl.ServerTitle, hl.Server = serverTable(sv)
		hl.Warnings = append(hl.Warnings, sv.AllWarnings()...)
	}
	if c := r.Calls; c != nil {
		hl.Calls = fmt.Sprintf("calls: %d started, %d completed, %d failed (%d at the warm-up turn), %d shed · %s turns/s of %s offered · %s in progress (Little's law %s) · mean call %s s",
			c.Started, c.Completed, c.Failed, c.WarmupFailed, c.Shed, num(c.TurnsPerS, 2), num(c.TurnsOfferedPerS, 2),
			num(c.AchievedConcurrency, 1), num(c.LittlesLaw, 1), num(c.MeanCallSeconds, 1))
		if ca := r.Cache; ca != nil && ca.Turns > 0 {
			hl.Calls += fmt.Sprintf(" · cold turns %s (%d of %d)", pct(ca.ColdShare), ca.ColdTurns, ca.Turns)
		}
	}
	if len(r.ByTurn) > 0 {
		hl.Turns = &htmlTable{Header: []string{"turn", "TTFT sched p50", "p95", "p99", "ITL p50", "p95", "n"}}
		for _, t := range r.ByTurn {
			hl.Turns.Rows = append(hl.Turns.Rows, htmlRow{Cells: []string{fmt.Sprint(t.Turn), ms(t.TTFT.P50), ms(t.TTFT.P95), ms(t.TTFT.P99),
				ms(t.ITL.P50), ms(t.ITL.P95), num(float64(t.TTFT.Count), 0)}})
		}
	}
	return hl
}

// serverTable is the server's view beside the client's, with bucket ranges
// where Prometheus histograms only bound a percentile.
func serverTable(sv *results.Server) (string, *htmlTable) {
	title := fmt.Sprintf("%s · %s · %s prompt and %s output tokens", sv.Source, results.Plural(int(sv.Requests), "request"), num(float64(sv.PromptTokens), 0), num(float64(sv.OutputTokens), 0))
	t := &htmlTable{Header: []string{"", "client", "server", "delivery"}}
	cell := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return ms(*v)
	}
	for _, f := range sv.Figures {
		server := cell(f.Server)
		if f.Estimate {
			server = bucketCell(f)
		}
		t.Rows = append(t.Rows, htmlRow{Cells: []string{f.Name, cell(f.Client), server, cell(f.Delivery)}})
	}
	return title, t
}

// measuredSizes are the sweep's mean prompt and answer sizes as the server
// counted them, over its levels.
func measuredSizes(s *results.Sweep) string {
	var in, out, n float64
	for _, l := range s.Levels {
		if l.Run != nil && l.Run.Tokens.Input.Count > 0 {
			c := float64(l.Run.Tokens.Input.Count)
			in += l.Run.Tokens.Input.Mean * c
			out += l.Run.Tokens.Output.Mean * c
			n += c
		}
	}
	if n == 0 {
		return ""
	}
	if s.Config.Pooled() {
		return fmt.Sprintf(" · measured: requests of %s prompt tokens on average", num(in/n, 0))
	}
	return fmt.Sprintf(" · measured: prompts of %s tokens and answers of %s on average", num(in/n, 0), num(out/n, 0))
}

// windowOf is a sweep's window per level.
func windowOf(s *results.Sweep) string {
	c := s.Config
	switch {
	case c.DurationS > 0:
		return fmt.Sprintf("%s per level", time.Duration(c.DurationS*float64(time.Second)))
	case c.Requests > 0:
		return results.Plural(c.Requests, "request") + " per level"
	}
	return "the whole trace per level"
}

func sizesOf(c results.Config) string {
	switch {
	case c.Voice != nil:
		return fmt.Sprintf("%s-token system prompt, %d output tokens, %d turns", num(float64(c.Voice.SystemPromptTokens), 0), c.Voice.OutputTokens, c.Voice.Turns)
	case c.Dataset != "":
		return "dataset " + c.Dataset
	case c.InputTokens > 0:
		prefix := ""
		if c.PrefixTokens > 0 {
			prefix = fmt.Sprintf(" after one of %d shared %d-token prefixes", c.PrefixPool, c.PrefixTokens)
		}
		budget := fmt.Sprintf("max_tokens %d", c.MaxTokens)
		if c.Pooled() {
			budget = pooledSize(c)
		}
		return fmt.Sprintf("%s input tokens%s, %s", spread(c.InputTokens, c.InputStddev, c.RangeRatio), prefix, budget)
	}
	return fmt.Sprintf("max_tokens %d", c.MaxTokens)
}

// facts are the facts given a value, in order.
func facts(all ...fact) []fact {
	var out []fact
	for _, f := range all {
		if strings.TrimSpace(f.Value) != "" {
			out = append(out, f)
		}
	}
	return out
}

// joinSome joins the parts that are not empty.
func joinSome(sep string, parts ...string) string {
	var some []string
	for _, p := range parts {
		if p != "" {
			some = append(some, p)
		}
	}
	return strings.Join(some, sep)
}

// suffixed is s with suffix, or nothing when s is empty.
func suffixed(s, suffix string) string {
	if s == "" {
		return ""
	}
	return s + suffix
}

// targetOf names what was measured: the URL, and whether it was knee's
// own simulator.
func targetOf(c results.Config) string {
	if c.BuiltinSim {
		return joinSome(" ", c.BaseURL, "(knee's built-in simulator)")
	}
	return c.BaseURL
}

// offeredText is a level's offered rate; "-" for a closed loop, which
// offers no rate (the terminal's table says it alike).
func offeredText(r *results.Run) string {
	if r.Arrivals.OfferedRate > 0 {
		return num(r.Arrivals.OfferedRate, 2)
	}
	return "-"
}
