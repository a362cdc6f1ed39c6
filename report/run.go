package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload/kind"
)

// Run writes the terminal summary of one run, wrapped to ReportColumns.
func Run(out io.Writer, r *results.Run) error {
	w := newWrapWriter(out, 9)
	defer w.Flush()
	return run(w, r)
}

func run(w io.Writer, r *results.Run) error {
	for _, part := range runParts {
		if err := part(w, r); err != nil {
			return err
		}
	}
	return nil
}

// runParts are a run's lines in the order the terminal shows them.
var runParts = []func(io.Writer, *results.Run) error{
	runHead, runArrivals, runLatencies, runPhases, runOutcomes, runCache, runTail,
}

// runHead is what ran against what, how many requests ended how, and
// the throughput.
func runHead(w io.Writer, r *results.Run) error {
	c := r.Config
	target := c.BaseURL
	if c.BuiltinSim {
		target = "built-in simulator (" + c.BaseURL + ")"
	}
	fmt.Fprintf(w, "target   %s · model %s · %s endpoint\n", target, c.Model, c.Endpoint)
	fmt.Fprintf(w, "workload %s\n", describeLoad(c))
	rq := r.Requests
	fmt.Fprintf(w, "requests %s ok · %s failed (%s errors)", num(float64(rq.OK), 0), num(float64(rq.Failed), 0), pct(rq.ErrorRate()))
	if rq.Interrupted > 0 {
		fmt.Fprintf(w, " · %s cut (%s of the window's, in no percentile)", num(float64(rq.Interrupted), 0), pct(r.MissingShare()))
	}
	fmt.Fprintf(w, " · %s warm-up · window %.2f s", num(float64(rq.Warmup), 0), r.WindowSeconds)
	if r.Interrupted {
		fmt.Fprint(w, " · INTERRUPTED")
	}
	fmt.Fprintln(w)
	tp := r.Throughput
	if c.Pooled() {
		fmt.Fprintf(w, "through  %s req/s · %s inputs/s · %s prompt tok/s (completed over the window and its drain; a pooling endpoint generates no tokens)\n",
			num(tp.RequestsPerS, 2), num(tp.InputsPerS, 1), num(tp.TotalTokensPerS, 1))
	} else {
		fmt.Fprintf(w, "through  %s req/s · %s output tok/s · %s total tok/s (completed over the window and its drain)\n",
			num(tp.RequestsPerS, 2), num(tp.OutputTokensPerS, 1), num(tp.TotalTokensPerS, 1))
	}
	return nil
}

// runArrivals is how the load went out: calls, arrivals, the ramp, and
// what the client could not send.
func runArrivals(w io.Writer, r *results.Run) error {
	c, a := r.Config, r.Arrivals
	switch {
	case r.Calls != nil:
		cl := r.Calls
		failed := fmt.Sprintf("%d failed", cl.Failed)
		if cl.WarmupFailed > 0 {
			failed += fmt.Sprintf(" (%d at the warm-up turn)", cl.WarmupFailed)
		}
		if c.Mode == results.ModeClosed {
			fmt.Fprintf(w, "calls    closed loop of %d · %d started · %d completed · %s · %.1f in progress on average · %s turns/s\n",
				c.Concurrency, cl.Started, cl.Completed, failed, cl.AchievedConcurrency, num(cl.TurnsPerS, 2))
			break
		}
		kept := cl.TurnsPerS
		if a.CompletionRate > 0 {
			kept = a.CompletionRate
		}
		fmt.Fprintf(w, "calls    target %s calls/s · offered %s calls/s · %d started · %d completed · %s · %d shed · turns kept pace at %s/s of %s/s offered\n",
			num(a.TargetRate, 2), num(a.OfferedRate, 2), cl.Started, cl.Completed, failed, cl.Shed, num(kept, 2), num(cl.TurnsOfferedPerS, 2))
	case c.Mode == results.ModeOpen:
		fmt.Fprintf(w, "arrivals target %s/s · offered %s/s · sent at %s/s · %d waited for a slot · %d late sends (>1 ms) · send lateness p99 %s ms\n",
			num(a.TargetRate, 2), num(a.OfferedRate, 2), num(a.AchievedRate, 2), a.Waited, a.LateSends, ms(a.SendLatenessP99Ms))
	default:
		// A stream's next request is due when its last ended: how late it
		// went out is the client's own delay, which the verdict judges.
		fmt.Fprintf(w, "arrivals closed loop · sent at %s/s · mean in flight %.1f · send lateness p99 %s ms\n", num(a.AchievedRate, 2), a.AchievedConcurrency, ms(a.SendLatenessP99Ms))
	}
	if rq := r.Requests; rq.Ramp > 0 {
		fmt.Fprintf(w, "ramp     %s over %s s (%s) before the window, unmeasured · %d still running as it opened\n",
			results.Plural(rq.Ramp, "request"), num(c.RampUpS, 1), c.RampUpStrategy, rq.RampRunning)
	}
	if a.Unsent > 0 {
		fmt.Fprintf(w, "unsent   %s due in the window %s still waiting for a slot when it closed\n", results.Plural(a.Unsent, "arrival"), results.WasWere(a.Unsent))
	}
	if cs := r.Connections; cs != nil && (cs.StaleClosed > 0 || cs.Resent > 0) {
		parts := []string{fmt.Sprintf("conns    %d opened", cs.Opened)}
		if cs.StaleClosed > 0 {
			parts = append(parts, fmt.Sprintf("%d found closed by the server before reuse", cs.StaleClosed))
		}
		if cs.Resent > 0 {
			parts = append(parts, results.Plural(int(cs.Resent), "request")+" re-sent after the server closed a reused connection unanswered (not errors)")
		}
		fmt.Fprintln(w, strings.Join(parts, " · "))
	}
	writeHealth(w, r.Health)
	return nil
}

// runLatencies is the latency table and the tokens per request.
func runLatencies(w io.Writer, r *results.Run) error {
	if err := latencyTable(w, r.Stats, r.Config.Pooled()); err != nil {
		return err
	}
	tk := r.Tokens
	fmt.Fprintf(w, "tokens/request  input p50 %s (mean %s, sd %s) · output p50 %s (mean %s, sd %s)",
		num(tk.Input.P50, 0), num(tk.Input.Mean, 1), num(tk.Input.Stddev, 1), num(tk.Output.P50, 0), num(tk.Output.Mean, 1), num(tk.Output.Stddev, 1))
	if tk.CachedReported && tk.InputTotal > 0 {
		fmt.Fprintf(w, " · cached %s of input", pct(float64(tk.CachedTotal)/float64(tk.InputTotal)))
	}
	fmt.Fprintln(w)
	return nil
}

// runOutcomes is what the answers held (reasoning, tools, images), the
// classes of a mix, goodput and calls in progress.
func runOutcomes(w io.Writer, r *results.Run) error {
	if rs := r.Reasoning; rs != nil {
		fmt.Fprintln(w, ReasoningLine(r))
	}
	if r.ToolCalls != nil {
		fmt.Fprintln(w, ToolsLine(r))
	}
	if r.Images != nil {
		fmt.Fprintln(w, ImagesLine(r))
	}
	if err := classesTable(w, r); err != nil {
		return err
	}
	if g := r.Goodput; g != nil {
		fmt.Fprintf(w, "goodput  %s of %d finished requests met %s · %s good req/s\n",
			pct(g.Share), g.Finished, boundsText(g.Bounds), num(g.RequestsPerS, 2))
	}
	if cl := r.Calls; cl != nil {
		fmt.Fprintf(w, "in call  %.1f calls in progress on average while calls arrived; Little's law expects %.1f (calls of %.1f s, in a window that starts empty)\n",
			cl.AchievedConcurrency, cl.LittlesLaw, cl.MeanCallSeconds)
	}
	return nil
}

// runCache is the prefix cache's hit rate, or why it is unknown, and the
// figures by turn of a call.
func runCache(w io.Writer, r *results.Run) error {
	if ca := r.Cache; ca != nil {
		expected := ""
		if ca.Expected != nil {
			expected = fmt.Sprintf(" · the prompts share %s with earlier ones (the hit a cache keeping everything would give)", pct(*ca.Expected))
		}
		switch {
		case ca.Reported && r.Calls != nil && ca.Turns > 0:
			fmt.Fprintf(w, "cache    hit rate %s of measured prompt tokens · %s of measured turns found their prefix cold%s\n", pct(ca.HitRate), pct(ca.ColdShare), expected)
		case ca.Reported:
			fmt.Fprintf(w, "cache    hit rate %s of measured prompt tokens%s\n", pct(ca.HitRate), expected)
		case ca.Expected != nil:
			fmt.Fprintf(w, "cache    the server does not report cached tokens%s\n", expected)
		default:
			fmt.Fprintln(w, "cache    hit rate unknown: the server does not report cached tokens (see the warning below)")
		}
	}
	if len(r.ByTurn) > 0 {
		return turnTable(w, r.ByTurn)
	}
	return nil
}

// runTail is the errors, retries, notes and warnings.
func runTail(w io.Writer, r *results.Run) error {
	rq := r.Requests
	if len(rq.Errors) > 0 {
		fmt.Fprintf(w, "errors   %s\n", formatCounts(rq.Errors))
		for _, line := range serverWords(rq) {
			fmt.Fprintf(w, "         %s\n", line)
		}
	}
	if fa := rq.FirstAttempt; fa != nil && fa.Retries > 0 {
		fmt.Fprintf(w, "retries  %d · first attempts %d ok, %d failed (%s)\n", fa.Retries, fa.OK, fa.Failed, formatCounts(fa.Errors))
	}
	if rq.PartialTokens > 0 {
		fmt.Fprintf(w, "partial  failed streams delivered %d tokens before breaking\n", rq.PartialTokens)
	}
	for _, note := range r.Notes {
		fmt.Fprintf(w, "note     %s\n", note)
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning  %s\n", warn)
	}
	return nil
}

// turnTable breaks TTFT (from the scheduled turn start) and ITL down by
// turn of a call.
func turnTable(w io.Writer, turns []results.TurnStats) error {
	rows := [][]string{}
	for _, t := range turns {
		rows = append(rows, []string{fmt.Sprintf("turn %d", t.Turn), ms(t.TTFT.P50), ms(t.TTFT.P95), ms(t.TTFT.P99), ms(t.ITL.P50), ms(t.ITL.P95), ms(t.ITL.P99), num(float64(t.TTFT.Count), 0)})
	}
	return renderTable(w, []string{"ms", "TTFT p50", "TTFT p95", "TTFT p99", "ITL p50", "ITL p95", "ITL p99", "n"}, rows)
}

func describeLoad(c results.Config) string {
	var b strings.Builder
	b.WriteString(string(c.Workload))
	if c.Voice != nil || c.Conversations != nil {
		describeCalls(&b, c)
		return b.String()
	}
	describeArrivals(&b, c)
	if c.Mix != "" {
		fmt.Fprintf(&b, " · %s · seed %d", c.Mix, c.Seed)
		return b.String()
	}
	describeSizes(&b, c)
	if c.Dataset != "" {
		fmt.Fprintf(&b, " · dataset %s", c.Dataset)
		if c.DatasetFormat != "" {
			fmt.Fprintf(&b, " (%s)", c.DatasetFormat)
		}
	}
	fmt.Fprintf(&b, " · seed %d", c.Seed)
	return b.String()
}

// describeCalls is a workload of calls: voice or conversations.
func describeCalls(b *strings.Builder, c results.Config) {
	if v := c.Voice; v != nil {
		fmt.Fprintf(b, " · %s calls/s (Poisson) · %d turns · %d-token system prompt · %d-token user turns · gap %.1f–%.1f s · %d output tokens · seed %d",
			num(c.Rate, 2), v.Turns, v.SystemPromptTokens, v.UserTokens, v.GapMinS, v.GapMaxS, v.OutputTokens, c.Seed)
		if v.MaxConcurrentCalls > 0 {
			fmt.Fprintf(b, " · at most %d calls", v.MaxConcurrentCalls)
		}
		return
	}
	cv := c.Conversations
	load := num(c.Rate, 2) + " conversations/s (Poisson)"
	if c.Mode == results.ModeClosed {
		load = fmt.Sprintf("%d conversations at once (closed loop: each slot takes the next as one ends)", c.Concurrency)
	}
	fmt.Fprintf(b, " · %s · think time %.1f–%.1f s unless the file gives delays", load, cv.GapMinS, cv.GapMaxS)
	if cv.LiveHistory {
		b.WriteString(" · the server's own answers as history")
	}
	if cv.MaxConcurrentCalls > 0 {
		fmt.Fprintf(b, " · at most %d in progress", cv.MaxConcurrentCalls)
	}
	fmt.Fprintf(b, " · max_tokens per turn, else %d · dataset %s (%s) · seed %d", c.MaxTokens, c.Dataset, c.DatasetFormat, c.Seed)
}

// describeArrivals is how requests arrive: a trace's times, an open loop
// or a closed one.
func describeArrivals(b *strings.Builder, c results.Config) {
	switch {
	case c.TraceSpeedup > 0:
		fmt.Fprintf(b, " · the trace's own arrival times at %s× speed (%s req/s on average)", num(c.TraceSpeedup, 3), num(c.Rate, 2))
	case c.Mode == results.ModeOpen:
		fmt.Fprintf(b, " · open loop, %s req/s", num(c.Rate, 2))
		if c.Burstiness != 0 && c.Burstiness != 1 {
			fmt.Fprintf(b, " (gamma, burstiness %g)", c.Burstiness)
		} else {
			b.WriteString(" (Poisson)")
		}
	default:
		fmt.Fprintf(b, " · closed loop, %s", results.Plural(c.Concurrency, "stream"))
		return
	}
	if c.MaxConcurrency > 0 {
		fmt.Fprintf(b, ", at most %d in flight", c.MaxConcurrency)
	}
}

// describeSizes is what a request holds: its input tokens and what it
// asks back (max_tokens, inputs or documents).
func describeSizes(b *strings.Builder, c results.Config) {
	switch {
	case c.InputTokens > 0:
		fmt.Fprintf(b, " · %s input tokens", spread(c.InputTokens, c.InputStddev, c.RangeRatio))
		if c.PrefixTokens > 0 {
			fmt.Fprintf(b, " after one of %d shared %d-token prefixes", c.PrefixPool, c.PrefixTokens)
		}
		if c.Pooled() {
			fmt.Fprintf(b, " · %s", pooledSize(c))
		} else {
			fmt.Fprintf(b, " · max_tokens %s", spread(c.MaxTokens, c.OutputStddev, c.RangeRatio))
		}
	case c.Pooled():
		fmt.Fprintf(b, " · %s", pooledSize(c))
	case c.Dataset != "":
		fmt.Fprintf(b, " · max_tokens per line, else %d", c.MaxTokens)
	default:
		fmt.Fprintf(b, " · max_tokens %d", c.MaxTokens)
	}
}

// pooledSize says what a pooling request holds: nothing is generated,
// so its batch says what a request is (a query and its documents, or
// inputs to embed).
func pooledSize(c results.Config) string {
	if c.Kind().Input == kind.Pairs {
		return results.Plural(max(c.Batch-1, 1), "document") + " a request"
	}
	return results.Plural(max(c.Batch, 1), "input") + " a request"
}

// spread describes an asked length and its distribution.
func spread(n int, sd, ratio float64) string {
	switch {
	case ratio > 0:
		return fmt.Sprintf("%d (uniform %d–%d)", n, int(float64(n)*(1-ratio)+0.5), int(float64(n)*(1+ratio)+0.5))
	case sd > 0:
		return fmt.Sprintf("%d ± %g (normal)", n, sd)
	}
	return fmt.Sprint(n)
}

func writeHealth(w io.Writer, h results.Health) {
	perToken := ""
	if h.CPUPerTokenUs > 0 {
		// (No tokens streamed, as from a pooling endpoint: no figure.)
		perToken = fmt.Sprintf(" (%.1f µs/token)", h.CPUPerTokenUs)
	}
	fmt.Fprintf(w, "client   timer lag p50 %s ms · p99 %s ms · max %s ms · CPU %.0f%%%s · GC %d (%s ms) · %s\n",
		ms(h.TimerLagP50Ms), ms(h.TimerLagP99Ms), ms(h.TimerLagMaxMs), h.CPUPercent, perToken, h.NumGC, ms(h.GCPauseMs), h.Verdict)
	for _, r := range h.Reasons {
		if h.Verdict == results.VerdictClientLimited {
			fmt.Fprintf(w, "         the client, not the server, limited these figures: %s\n", r)
		} else {
			fmt.Fprintf(w, "         %s\n", r)
		}
	}
}

func latencyTable(w io.Writer, s results.Stats, pooled bool) error {
	rows := [][]string{}
	add := func(name string, v results.Summary) {
		if pooled && v.Count == 0 && name != "E2E" && name != "E2E sched" && name != "queue wait" {
			// A pooling endpoint streams no tokens: no TTFT, ITL or TPOT.
			return
		}
		if v.Count == 0 {
			rows = append(rows, []string{name, "-", "-", "-", "-", "-", "-", "-", "0"})
			return
		}
		rows = append(rows, []string{name, ms(v.Mean), ms(v.Min), ms(v.P50), ms(v.P90), ms(v.P95), ms(v.P99), ms(v.Max), num(float64(v.Count), 0)})
	}
	add("TTFT", s.TTFT)
	add("TTFT sched", s.TTFTSched)
	add("ITL", s.ITL)
	add("TPOT", s.TPOT)
	add("E2E", s.E2E)
	add("E2E sched", s.E2ESched)
	add("queue wait", s.QueueWait)
	return renderTable(w, []string{"ms", "mean", "min", "p50", "p90", "p95", "p99", "max", "n"}, rows)
}

// serverWords are the server's first words for each error class it gave
// any: `http_400:invalid_request_error said "…"`.
func serverWords(rq results.Requests) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(rq.ErrorMessages)) {
		out = append(out, fmt.Sprintf("%s said %q", k, rq.ErrorMessages[k]))
	}
	return out
}

func formatCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, " · ")
}

// boundsText lists goodput bounds in a fixed order.
func boundsText(b map[string]float64) string {
	var parts []string
	for _, m := range results.Metrics {
		if v, ok := b[m.Name]; ok {
			parts = append(parts, fmt.Sprintf("%s ≤ %g ms", m.Name, v))
		}
	}
	return strings.Join(parts, ", ")
}

// RunAndServer writes a run's report, and the server's view beside it
// when the run has one.
func RunAndServer(w io.Writer, r *results.Run) error {
	if err := Run(w, r); err != nil {
		return err
	}
	if line := SlicesLine(r); line != "" {
		fmt.Fprintln(w, line)
	}
	if r.GPU != nil {
		fmt.Fprintln(w, GPULine(r.GPU))
	}
	if r.Server != nil {
		return Server(w, r.Server)
	}
	return nil
}
