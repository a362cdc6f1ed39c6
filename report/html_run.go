package report

import (
	"fmt"
	"strings"

	"github.com/kneebench/knee/results"
)

type htmlRun struct {
	Index   int
	ID      string
	Heading string
	Facts   []fact
	Latency *htmlTable
	// Classes, for a mix, are its classes side by side.
	Classes *htmlTable
	Detail  htmlLevel
}

func runSection(r *results.Run, i int) htmlRun {
	c := r.Config
	hr := htmlRun{Index: i, ID: fmt.Sprint(i + 1), Heading: fmt.Sprintf("Run %d — %s", i+1, c.Model)}
	if r.Config.Predicted {
		hr.Heading += " (predicted)"
	}
	if r.Shard != nil && r.Shard.Count > 1 {
		hr.Heading += fmt.Sprintf(" (shard %d of %d)", r.Shard.Index, r.Shard.Count)
	}
	hr.Facts = runFacts(r)
	hr.Latency = runLatency(r)
	hr.Classes = classesHTML(r)
	hr.Detail = levelDetails(r, "this run")
	return hr
}

// runFacts is a run's header: what ran against what, how its requests
// ended, its throughput and arrivals, then what else it measured.
func runFacts(r *results.Run) []fact {
	c := r.Config
	rq, tp, a := r.Requests, r.Throughput, r.Arrivals
	started := ""
	if !r.StartedAt.IsZero() {
		started = r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	out := facts(
		fact{"target", targetOf(c)}, fact{"model", joinSome(" · ", c.Model, suffixed(c.Endpoint, " endpoint"))}, fact{"workload", describeLoad(c)},
		fact{"started", started}, fact{"window", fmt.Sprintf("%.2f s", r.WindowSeconds)},
		fact{"requests", fmt.Sprintf("%d ok · %d failed · %d interrupted · %d warm-up%s", rq.OK, rq.Failed, rq.Interrupted, rq.Warmup, rampFact(rq))},
		fact{"throughput", fmt.Sprintf("%s req/s · %s output tok/s", num(tp.RequestsPerS, 2), num(tp.OutputTokensPerS, 1))},
	)
	if c.Pooled() {
		// A pooling endpoint generates nothing: its rate is its inputs'.
		out[len(out)-1] = fact{"throughput", fmt.Sprintf("%s req/s · %s inputs/s · %s prompt tok/s", num(tp.RequestsPerS, 2), num(tp.InputsPerS, 1), num(tp.TotalTokensPerS, 1))}
	}
	if p := r.Repeats.Plus("throughput", func(v float64) string { return num(v, 2) }); p != "" {
		// A repeated run's throughput carries its interval.
		out[len(out)-1].Value = strings.Replace(out[len(out)-1].Value, " req/s", " "+p+" req/s", 1)
	}
	if c.Mode == results.ModeOpen {
		out = append(out, fact{"arrivals", fmt.Sprintf("target %s/s · offered %s/s · sent at %s/s · %d waited for a slot · %d unsent · send lateness p99 %s ms",
			num(a.TargetRate, 2), num(a.OfferedRate, 2), num(a.AchievedRate, 2), a.Waited, a.Unsent, ms(a.SendLatenessP99Ms))})
	}
	if len(rq.Errors) > 0 {
		out = append(out, fact{"errors", strings.Join(append([]string{formatCounts(rq.Errors)}, serverWords(rq)...), " · ")})
	}
	return append(out, measuredFacts(r)...)
}

// measuredFacts is what else a run measured: energy, goodput, the cache,
// reasoning, tools, images, connections and repeats.
func measuredFacts(r *results.Run) []fact {
	var out []fact
	if g := r.GPU; g != nil && len(g.GPUs) > 0 {
		out = append(out, fact{"GPU energy", fmt.Sprintf("%s J over %s s on %d GPUs · power mean %s W, max %s W · %s J per output token · %s output tokens per J",
			num(g.EnergyJ, 0), num(g.WindowS, 1), len(g.GPUs), num(g.PowerMeanW, 0), num(g.PowerMaxW, 0), num(g.JoulesPerOutputToken, 4), num(g.OutputTokensPerJoule, 2))})
	}
	if f := r.Fairness; f != nil {
		out = append(out, fact{"fairness", fmt.Sprintf("%.3f (Jain's index over the classes' goodput: 1 when all fare alike)", *f)})
	}
	if g := r.Goodput; g != nil {
		out = append(out, fact{"goodput", fmt.Sprintf("%s of %d met %s · %s good req/s", pct(g.Share), g.Finished, boundsText(g.Bounds), num(g.RequestsPerS, 2))})
	}
	if ca := r.Cache; ca != nil && ca.Reported {
		v := pct(ca.HitRate)
		if ca.Expected != nil {
			v += fmt.Sprintf(" (the prompts explain %s)", pct(*ca.Expected))
		}
		out = append(out, fact{"cache hit rate", v})
	}
	if r.Reasoning != nil {
		out = append(out, fact{"reasoning", strings.Replace(ReasoningLine(r), "\n          ", " · ", 1)})
	}
	if r.ToolCalls != nil {
		out = append(out, fact{"tool calls", strings.TrimPrefix(ToolsLine(r), "tool calls  ")})
	}
	if r.Images != nil {
		out = append(out, fact{"images", strings.TrimPrefix(ImagesLine(r), "images   ")})
	}
	if ph := r.Phases; ph != nil {
		out = append(out, fact{"TTFT by phase", strings.TrimPrefix(PhasesLine(ph), "phases   TTFT by phase, ")})
	}
	for _, role := range []string{"prefill", "decode"} {
		if s := r.Pools[role]; s != nil {
			out = append(out, fact{role + " pool", poolBody(s)})
		}
	}
	if cn := r.Connections; cn != nil {
		out = append(out, fact{"connections", fmt.Sprintf("%d opened · %d found closed before reuse · %s resent", cn.Opened, cn.StaleClosed, results.Plural(int(cn.Resent), "request"))})
	}
	if rp := r.Repeats; rp != nil {
		out = append(out, fact{"repeats", fmt.Sprintf("%d, each from its own seed and prompts: the figures are pooled over them, ± is half the %s",
			rp.Count, results.RepeatMethod)})
	}
	return out
}

// runLatency is a run's latency table, each repeated figure with its
// interval.
func runLatency(r *results.Run) *htmlTable {
	c := r.Config
	t := &htmlTable{Header: []string{"", "mean", "min", "p50", "p90", "p95", "p99", "max", "n"}}
	for _, row := range []struct {
		name string
		s    results.Summary
		key  string
	}{{"TTFT", r.Stats.TTFT, "ttft"}, {"TTFT sched", r.Stats.TTFTSched, "ttft_sched"}, {"ITL", r.Stats.ITL, "itl"}, {"TPOT", r.Stats.TPOT, "tpot"},
		{"E2E", r.Stats.E2E, "e2e"}, {"E2E sched", r.Stats.E2ESched, "e2e_sched"}, {"queue wait", r.Stats.QueueWait, "queue_wait"}} {
		if row.name == "queue wait" && r.Reasoning != nil {
			// A reasoning model's first answer token, apart from its
			// first token of thought.
			t.Rows = append(t.Rows, latencyRow("TTFAT", r.Stats.TTFAT), latencyRow("TTFAT sched", r.Stats.TTFATSched),
				latencyRow("TPOT answer", r.Reasoning.TPOTAnswer), latencyRow("ITL answer", r.Reasoning.ITLAnswer))
		}
		if c.Pooled() && row.s.Count == 0 && strings.HasPrefix(row.name, "T") || c.Pooled() && row.name == "ITL" {
			// No token streamed: no TTFT, ITL or TPOT to show.
			continue
		}
		lr := latencyRow(row.name, row.s)
		if row.s.Count > 0 {
			// A repeated run's percentiles carry their interval.
			for i, p := range []string{"p50", "p90", "p95", "p99"} {
				if plus := r.Repeats.Plus(row.key+"."+p, ms); plus != "" {
					lr.Cells[3+i] += " " + plus
				}
			}
		}
		t.Rows = append(t.Rows, lr)
	}
	return t
}

// latencyRow is a latency table's row of s.
func latencyRow(name string, s results.Summary) htmlRow {
	if s.Count == 0 {
		return htmlRow{Cells: []string{name, "-", "-", "-", "-", "-", "-", "-", "0"}}
	}
	return htmlRow{Cells: []string{name, ms(s.Mean), ms(s.Min), ms(s.P50), ms(s.P90), ms(s.P95), ms(s.P99), ms(s.Max), num(float64(s.Count), 0)}}
}

// rampFact says what --ramp-up sent before the window, if anything.
func rampFact(rq results.Requests) string {
	if rq.Ramp == 0 {
		return ""
	}
	return fmt.Sprintf(" · %d ramp (%d running as the window opened)", rq.Ramp, rq.RampRunning)
}
