package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kneebench/knee/results"
)

type htmlPlan struct {
	Facts  []fact
	Table  *htmlTable
	Misses *htmlTable
	Notes  []string
	Caveat string
	Day    *htmlDay
}

// htmlDay is a day plan: what it ran, and a row per policy.
type htmlDay struct {
	Facts []fact
	Table *htmlTable
	Notes []string
}

func daySection(d *results.DayPlan) *htmlDay {
	hd := &htmlDay{Notes: slices.Clone(d.Notes), Facts: []fact{
		{"rate curve", fmt.Sprintf("%s: %s, peak %s/s, mean %s/s", d.Trace, daySpan(d), loadText(d.PeakRate), loadText(d.MeanRate))},
		{"served by", fmt.Sprintf("%s: one replica meets the SLO up to %s/s and completes at most %s/s", orNone(d.Config), loadText(d.Capacity), loadText(d.Saturation))},
		{"choice", dayChoice(d)},
	}}
	hd.Table = &htmlTable{Header: []string{"policy", "GPU-hours", "$", "vs static", "minutes met", "arrivals met", "peak replicas", "scale-ups / downs", "missed"}}
	static := 0.0
	if len(d.Policies) > 0 {
		static = d.Policies[0].GPUHours
	}
	for _, p := range d.Policies {
		if !p.Static {
			hd.Notes = append(hd.Notes, p.Name+": "+p.Policy)
		}
		hd.Table.Rows = append(hd.Table.Rows, htmlRow{Cells: []string{p.Name, num(p.GPUHours, 1), money(p.Cost), saving(p.GPUHours, static),
			fmt.Sprintf("%d of %d", p.MinutesMet, p.Minutes), fmt.Sprintf("%.2f%%", 100*p.Attainment), strconv.Itoa(p.PeakReplicas),
			fmt.Sprintf("%d / %d", p.ScaleUps, p.ScaleDowns), missedText(p.Missed)}})
	}
	return hd
}

func planSection(p *results.Plan) htmlPlan {
	unit := "/s"
	if p.Axis == "concurrency" {
		unit = " streams"
	}
	what := num(p.Target, -1) + unit
	if p.FindMax {
		what = "the largest load each fleet holds"
	}
	hp := htmlPlan{Notes: p.Notes, Caveat: p.Caveat, Facts: []fact{
		{"answer", p.Answer()},
		{"load", what}, {"workload", sizesOf(p.Config)}, {"SLO", p.SLOText()},
		{"window", fmt.Sprintf("%.0f s of simulated time per prediction, %d predictions", p.WindowS, p.Predictions)},
		{"prices", p.PriceSource},
	}}
	hp.Table = &htmlTable{Header: planHeader(p)}
	hp.Misses = &htmlTable{Header: []string{"configuration", "routing", "why it does not meet the SLO"}}
	for _, r := range p.Rows {
		if !r.Meets {
			why := r.Why
			if r.Limit != "" {
				why += "; one replica is limited by " + r.Limit + ": " + r.LimitDetail
			}
			hp.Misses.Rows = append(hp.Misses.Rows, htmlRow{Cells: []string{r.Config, r.RoutingText(), why}})
			continue
		}
		row := htmlRow{Cells: planCells(r, p.SLO.Bounds, unit)}
		if r.Limit != "" {
			// The limit in a word; its sentence on hover keeps the costs
			// in view on a laptop's screen.
			row.Titles = map[int]string{planLimitCell: r.LimitDetail}
		}
		hp.Table.Rows = append(hp.Table.Rows, row)
	}
	if len(hp.Misses.Rows) == 0 {
		hp.Misses = nil
	}
	var cliffs []string
	for _, r := range p.Rows {
		for _, c := range []string{r.Cliff, r.ModeEdge} {
			if c != "" {
				cliffs = append(cliffs, fmt.Sprintf("cliff: %s (%s): %s", r.Config, orNone(r.Routing), c))
			}
		}
	}
	hp.Notes = append(cliffs, hp.Notes...)
	if lens := maxModelLens(p.Rows); lens != "" {
		hp.Notes = append(hp.Notes, "†: "+maxModelLenWords+lens)
	}
	if p.Day != nil {
		hp.Day = daySection(p.Day)
	}
	return hp
}

// planLimitCell is the plan table's cell of what limits a replica.
const planLimitCell = 6

// planHeader heads the plan page's table: the fleet, the SLO's bounds,
// then its figures and costs, in prompt tokens for a pooling endpoint
// (it generates none).
func planHeader(p *results.Plan) []string {
	h := []string{"configuration", "replicas", "GPUs", "routing", "headroom", "per replica", "what limits a replica"}
	for _, b := range p.SLO.Bounds {
		h = append(h, boundTitle(b))
	}
	tokens := p.Config.Tokens()
	return append(h, "TTFT p50", "TPOT p50", tokens+" tok/s", "$/h", "$/M "+tokens+" tok", "KV seqs", "nearest limit", "calibration")
}

// planCells is a fleet's row on the plan page: its shape, headroom and
// limit, its figures at the target, costs and calibration.
func planCells(r results.PlanRow, bounds []results.Bound, unit string) []string {
	routing := r.RoutingText()
	limit := "-"
	if r.Limit != "" {
		limit = r.Limit
	}
	config := r.Config
	if r.MaxModelLen > 0 {
		config += " †"
	}
	row := []string{config, strconv.Itoa(r.Replicas), strconv.Itoa(r.GPUs), routing, loadText(r.Headroom) + unit, perReplicaText(r, unit), limit}
	a := r.AtTarget
	for _, b := range bounds {
		v := "-"
		if x, ok := a.Bound(b); ok {
			v = ms(x)
		}
		row = append(row, v)
	}
	if a != nil {
		row = append(row, ms(a.TTFTP50), ms(a.TPOTP50), planTokens(r))
	} else {
		row = append(row, "-", "-", "-")
	}
	nearest := "-"
	if a != nil && a.BindingBound != "" {
		nearest = fmt.Sprintf("%s at %s ms", results.BoundText(a.BindingBound), ms(a.BindingValue))
	}
	return append(row, money(r.CostPerHour), money(r.CostPerMTokens()), count(r.KVSequences), nearest, r.Calibration)
}

type htmlCalibration struct {
	Facts    []fact
	Params   *htmlTable
	Levels   *htmlTable
	Verdict  string
	Poor     bool
	Problems []string
	Notes    []string
}

func calibrationSection(c *results.Calibration) htmlCalibration {
	hc := htmlCalibration{Notes: c.Notes, Problems: c.Problems, Poor: c.Verdict == results.FitPoor}
	hc.Facts = []fact{{"measured", c.Measured}, {"model", c.Model + " of " + c.Origin},
		{"search", fmt.Sprintf("%d replays of the fitted levels", c.Evaluations)}}
	for _, g := range []struct {
		name string
		e    results.FitError
	}{{"fitted levels", c.Train}, {"held-out levels", c.HeldOut}} {
		if g.e.Levels > 0 {
			hc.Facts = append(hc.Facts, fact{g.name, fmt.Sprintf("%d: mean absolute error %.1f%% from the start, %.1f%% fitted; worst %.1f%% (%s at %s)",
				g.e.Levels, g.e.StartPercent, g.e.FittedPercent, g.e.WorstPercent, g.e.WorstMetric, num(g.e.WorstLevelLoad, -1))})
		}
	}
	switch {
	case c.Interrupted:
		hc.Verdict = "stopped before the search ended: the parameters are the best point it reached"
		hc.Poor = true
	case c.Verdict == results.FitGood:
		hc.Verdict = fmt.Sprintf("a good fit: within %.0f%% on the fitted and the held-out levels", c.Tolerance)
	case c.Verdict == results.FitPoor:
		hc.Verdict = "a POOR fit, not to be planned on"
	}
	hc.Params = &htmlTable{Header: calibrationParamHeader}
	for _, p := range c.Params {
		hc.Params.Rows = append(hc.Params.Rows, htmlRow{Cells: []string{p.Name, sig(p.Start), sig(p.Value), paramConfidence(p, c.Interrupted)}})
	}
	hc.Levels = &htmlTable{Header: calibrationLevelHeader}
	for _, r := range calibrationLevelRows(c) {
		if r.skipped != "" {
			hc.Levels.Rows = append(hc.Levels.Rows, htmlRow{Class: "excluded", Cells: r.cells[:2], Note: r.skipped})
			continue
		}
		hc.Levels.Rows = append(hc.Levels.Rows, htmlRow{Cells: r.cells})
	}
	return hc
}
