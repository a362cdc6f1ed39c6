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
		fmt.Fprintf(w, "CAVEAT: %s\n\n", p.Caveat)
	}
	if a := p.Answer(); a != "" && !p.FindMax {
		fmt.Fprintf(w, "answer: %s\n\n", a)
	}
	if p.FindMax {
		fmt.Fprintf(w, "the largest load each fleet holds meeting %s\n\n", p.SLOText())
	} else {
		fmt.Fprintf(w, "configurations serving %s%s meeting %s, cheapest first\n\n", num(p.Target, -1), unit, p.SLOText())
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
	header := []string{"configuration", "replicas", "GPUs", "routing", "headroom", "per replica", "replica limit"}
	for _, b := range p.SLO.Bounds {
		header = append(header, fmt.Sprintf("%s p%g", b.Metric, b.Percentile))
	}
	header = append(header, "tok/s", "$/h", "$/M tok", "KV seqs", "limit")
	var rows [][]string
	var misses []results.PlanRow
	apriori := false
	for _, r := range p.Rows {
		if !r.Meets {
			misses = append(misses, r)
			continue
		}
		routing := r.RoutingText()
		config := r.Config
		if r.Calibration == results.CalibrationApriori {
			config += " *"
			apriori = true
		}
		row := []string{config, strconv.Itoa(r.Replicas), strconv.Itoa(r.GPUs), routing, loadText(r.Headroom) + unit, perReplicaText(r, unit), limitText(r)}
		rows = append(rows, append(row, planFigures(r, p.SLO.Bounds)...))
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "no configuration searched meets the SLO.")
		return misses, apriori, nil
	}
	return misses, apriori, renderTable(w, header, rows)
}

// planFigures is a row's bounds at the target, then its throughput, costs,
// KV sequences and the bound nearest its limit.
func planFigures(r results.PlanRow, bounds []results.Bound) []string {
	var row []string
	for _, b := range bounds {
		v := "-"
		if x, ok := r.AtTarget.Bound(b); ok {
			v = ms(x)
		}
		row = append(row, v)
	}
	tok := "-"
	if r.AtTarget != nil {
		tok = num(r.AtTarget.OutputTokensPerS, 0)
	}
	limit := "-"
	if a := r.AtTarget; a != nil && a.BindingBound != "" {
		if b, _, err := results.ParseBounds(a.BindingBound); err == nil && len(b) == 1 {
			limit = fmt.Sprintf("%s p%g %.0f%%", b[0].Metric, b[0].Percentile, 100*a.BindingValue/b[0].Ms)
		}
	}
	return append(row, tok, money(r.CostPerHour), money(r.CostPerMOutputTokens), count(r.KVSequences), limit)
}

// planLegend says what the table's columns mean.
func planLegend(w io.Writer, p *results.Plan, apriori bool) {
	what := "at the target"
	if p.FindMax {
		what = "at that load"
	}
	fmt.Fprintf(w, "headroom: the largest load meeting every SLO with those replicas (to within %g%%); latencies in ms %s; $/M tok: per million output tokens %s\n",
		100*stepOf(p), what, what)
	fmt.Fprintln(w, "limit: the SLO bound nearest its limit at the target, as a share of it (what the fleet would break first)")
	fmt.Fprintln(w, "replica limit: what bounds one replica at its capacity, from its scheduler steps there: the KV cache or the batch slots when they stopped admission while requests waited, else compute, memory bandwidth or the all-reduces, whichever set most of the step time")
	if p.Disaggregated {
		fmt.Fprintln(w, "xPyD: served disaggregated, x prefill and y decode replicas, each decode replica's KV over its own link; its replica limit is what binds the split: under a first-token bound the part that took most of the time to first token (prefill compute, the KV link, decode admission or KV capacity, decode bandwidth) and its share of it, else decode bandwidth or KV capacity and how busy the decode pool was")
	}
	if apriori {
		fmt.Fprintln(w, "*: a priori — this GPU family's cost model was never fitted to a measurement (data-sheet peaks at default efficiencies); --calibrated-only leaves such rows out")
	}
	if p.PriceSource != "" {
		fmt.Fprintf(w, "prices: %s\n", p.PriceSource)
	}
}

// planMisses is the table of configurations that do not meet the SLO and
// why, the cliffs found, and the plan's notes.
func planMisses(w io.Writer, p *results.Plan, misses []results.PlanRow) error {
	if len(misses) > 0 {
		fmt.Fprintln(w)
		var mrows [][]string
		for _, r := range misses {
			why := r.Why
			if r.Limit != "" {
				why += "; one replica is limited by " + limitText(r)
			}
			mrows = append(mrows, []string{r.Config, r.RoutingText(), why})
		}
		if err := renderTable(w, []string{"does not meet the SLO", "routing", "why"}, mrows); err != nil {
			return err
		}
	}
	for _, r := range p.Rows {
		if r.Cliff != "" {
			fmt.Fprintf(w, "cliff: %s (%s): %s\n", r.Config, orNone(r.Routing), r.Cliff)
		}
		if r.ModeEdge != "" {
			fmt.Fprintf(w, "cliff: %s (%s): %s\n", r.Config, orNone(r.Routing), r.ModeEdge)
		}
	}
	if seeds := planSeeds(p); seeds > 1 {
		fmt.Fprintf(w, "seeds: a fleet counts only when it meets every bound on each of %d arrival schedules at the target\n", seeds)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
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
