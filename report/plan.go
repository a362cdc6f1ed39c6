package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kneebench/knee/results"
)

// Plan prints a capacity plan: the configurations that meet every SLO,
// cheapest first, with their GPUs, headroom, figures at the target and
// costs; then those that do not, with why.
func Plan(w io.Writer, p *results.Plan) error {
	unit := "/s"
	if p.Axis == "concurrency" {
		unit = " streams"
	}
	if p.Caveat != "" {
		Wrapf(w, 2, "CAVEAT: %s\n\n", p.Caveat)
	}
	if a := p.Answer(); a != "" && !p.FindMax {
		Wrapf(w, 2, "answer: %s\n\n", a)
	}
	if p.FindMax {
		Wrapf(w, 2, "the largest load each fleet holds meeting %s\n\n", p.SLOText())
	} else {
		Wrapf(w, 2, "configurations serving %s%s meeting %s, cheapest first\n\n", num(p.Target, -1), unit, p.SLOText())
	}
	misses, apriori, err := planTable(w, p, unit)
	if err != nil {
		return err
	}
	planLegend(w, p, apriori)
	if err := planMisses(w, p, misses); err != nil {
		return err
	}
	if p.Day != nil {
		return planDay(w, p.Day)
	}
	return nil
}

// planTable is the table of the fleets that meet the SLO; it returns the
// rows that do not, and whether any row's cost model is a priori.
func planTable(w io.Writer, p *results.Plan, unit string) ([]results.PlanRow, bool, error) {
	// In order of what a reader needs first; a terminal too narrow for
	// all of them gets them in several tables, each naming its rows.
	header := []string{"configuration", "routing", "replicas", "headroom"}
	for _, b := range p.SLO.Bounds {
		header = append(header, boundTitle(b))
	}
	header = append(header, "$/h", "$/M tok", "limit", "replica limit", "per replica", "GPUs", "tok/s", "KV seqs")
	var rows [][]string
	var misses []results.PlanRow
	apriori := false
	for _, r := range p.Rows {
		if !r.Meets {
			misses = append(misses, r)
			continue
		}
		config := r.Config
		if r.Calibration == results.CalibrationApriori {
			config += " *"
			apriori = true
		}
		if r.MaxModelLen > 0 {
			config += " †"
		}
		row := []string{config, r.RoutingText(), strconv.Itoa(r.Replicas), loadText(r.Headroom) + unit}
		rows = append(rows, append(append(row, planFigures(r, p.SLO.Bounds)...), perReplicaText(r, unit), strconv.Itoa(r.GPUs),
			planTokens(r), count(r.KVSequences)))
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "no configuration searched meets the SLO.")
		return misses, apriori, nil
	}
	return misses, apriori, renderTablesWithin(w, Width(w), 2, header, rows)
}

// planFigures is a row's bounds at the target, its costs, the bound
// nearest its limit and what limits a replica.
func planFigures(r results.PlanRow, bounds []results.Bound) []string {
	var row []string
	for _, b := range bounds {
		v := "-"
		if x, ok := r.AtTarget.Bound(b); ok {
			v = ms(x)
		}
		row = append(row, v)
	}
	limit := "-"
	if a := r.AtTarget; a != nil && a.BindingBound != "" {
		if b, _, err := results.ParseBounds(a.BindingBound); err == nil && len(b) == 1 {
			limit = fmt.Sprintf("%s p%g %.0f%%", b[0].Metric, b[0].Percentile, 100*a.BindingValue/b[0].Ms)
		}
	}
	return append(row, money(r.CostPerHour), money(r.CostPerMTokens()), limit, limitText(r))
}

// planTokens is a row's output tokens per second at the target, or a
// pooling endpoint's prompt tokens.
func planTokens(r results.PlanRow) string {
	if r.AtTarget == nil {
		return "-"
	}
	if r.AtTarget.PromptTokensPerS > 0 {
		return num(r.AtTarget.PromptTokensPerS, 0)
	}
	return num(r.AtTarget.OutputTokensPerS, 0)
}

// planLegend says what the table's columns mean.
func planLegend(w io.Writer, p *results.Plan, apriori bool) {
	what := "at the target"
	if p.FindMax {
		what = "at that load"
	}
	tokens := "output tokens"
	if p.Config.Pooled() {
		tokens = "prompt tokens (a pooling endpoint generates none; tok/s are theirs too)"
	}
	Wrapf(w, 2, "headroom: the largest load meeting every SLO with those replicas (to within %g%%); latencies in ms %s; $/M tok: per million %s %s\n",
		100*stepOf(p), what, tokens, what)
	Wrap(w, 2, "limit: the SLO bound nearest its limit at the target, as a share of it (what the fleet would break first)\n")
	Wrap(w, 2, "replica limit: what bounds one replica at its capacity, from its scheduler steps there: the KV cache or the batch slots when they stopped admission while requests waited, else compute, memory bandwidth or the all-reduces, whichever set most of the step time\n")
	if p.Disaggregated {
		Wrap(w, 2, "xPyD: served disaggregated, x prefill and y decode replicas, each decode replica's KV over its own link; its replica limit is what binds the split: under a first-token bound the part that took most of the time to first token (prefill compute, the KV link, decode admission or KV capacity, decode bandwidth) and its share of it, else decode bandwidth or KV capacity and how busy the decode pool was\n")
	}
	if apriori {
		Wrap(w, 2, "*: a priori — this GPU family's cost model was never fitted to a measurement (data-sheet peaks at default efficiencies); --calibrated-only leaves such rows out\n")
	}
	if lens := maxModelLens(p.Rows); lens != "" {
		Wrapf(w, 2, "†: %s%s\n", maxModelLenWords, lens)
	}
	if p.PriceSource != "" {
		Wrapf(w, 2, "prices: %s\n", p.PriceSource)
	}
}

// maxModelLenWords open the † note of a plan's rows that vLLM starts
// only with a shorter context than the model's.
const maxModelLenWords = "vLLM refuses to start this at the model's whole context (its KV cache holds no request that long): serve it with --max-model-len at most "

// maxModelLens lists the meeting rows' configurations that vLLM starts
// only with a shorter context, and the longest each takes.
func maxModelLens(rows []results.PlanRow) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Meets && r.MaxModelLen > 0 && !seen[r.Config] {
			seen[r.Config] = true
			out = append(out, fmt.Sprintf("%s (%s)", num(float64(r.MaxModelLen), 0), r.Config))
		}
	}
	return strings.Join(out, ", ")
}

// planMisses lists the configurations that do not meet the SLO and why
// (a sentence each, wrapped to the report's width), the cliffs found, and
// the plan's notes.
func planMisses(w io.Writer, p *results.Plan, misses []results.PlanRow) error {
	if len(misses) > 0 {
		fmt.Fprintln(w, "\ndoes not meet the SLO:")
		for _, r := range misses {
			why := r.Why
			if r.Limit != "" {
				why += "; one replica is limited by " + limitText(r)
			}
			Wrapf(w, 4, "  %s (%s): %s\n", r.Config, r.RoutingText(), why)
		}
	}
	for _, r := range p.Rows {
		if r.Cliff != "" {
			Wrapf(w, 2, "cliff: %s (%s): %s\n", r.Config, orNone(r.Routing), r.Cliff)
		}
		if r.ModeEdge != "" {
			Wrapf(w, 2, "cliff: %s (%s): %s\n", r.Config, orNone(r.Routing), r.ModeEdge)
		}
	}
	if seeds := planSeeds(p); seeds > 1 {
		Wrapf(w, 2, "seeds: a fleet counts only when it meets every bound on each of %d arrival schedules at the target\n", seeds)
	}
	for _, n := range p.Notes {
		Wrapf(w, 2, "note: %s\n", n)
	}
	return nil
}

// limitText is what limits a row's replica, with its share: "KV
// capacity 84%".
func limitText(r results.PlanRow) string {
	if r.Limit == "" {
		return "-"
	}
	return fmt.Sprintf("%s %.0f%%", r.Limit, 100*r.LimitShare)
}

// planSeeds is the arrival schedules the plan's rows were checked on.
func planSeeds(p *results.Plan) int {
	for _, r := range p.Rows {
		if r.Seeds > 0 {
			return r.Seeds
		}
	}
	return 0
}

// stepOf is the plan's bisection resolution, relative.
func stepOf(p *results.Plan) float64 {
	for _, r := range p.Rows {
		if r.Step > 0 && r.Headroom > 0 && p.Axis == "rate" {
			return round2(r.Step / r.Headroom)
		}
	}
	return 0.02
}

func round2(v float64) float64 { return float64(int(v*100+0.5)) / 100 }

// loadText writes a load to three significant digits.
func loadText(v float64) string {
	switch {
	case v <= 0:
		return "0"
	case v >= 100:
		return num(v, 0)
	case v >= 10:
		return num(v, 1)
	}
	return num(v, 2)
}

// money writes dollars, or - for none.
func money(v float64) string {
	if v <= 0 {
		return "-"
	}
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return strings.TrimSuffix(num(v, 0), ".0")
}

// count writes a count, or - for none.
func count(n int) string {
	if n <= 0 {
		return "-"
	}
	return num(float64(n), 0)
}

// perReplicaText is a row's per-replica capacity, or "-" for a split,
// whose replicas serve no load alone.
func perReplicaText(r results.PlanRow, unit string) string {
	if r.PrefillReplicas > 0 {
		return "-"
	}
	return loadText(r.PerReplica) + unit
}

// boundTitle heads an SLO bound's column as the other latency columns
// are headed: "TTFT sched p95", not "ttft_sched p95".
func boundTitle(b results.Bound) string {
	title := b.Metric
	if m, ok := results.MetricNamed(b.Metric); ok {
		title = m.Title
	}
	return fmt.Sprintf("%s p%g", title, b.Percentile)
}
