package predict

import (
	"math"

	"github.com/kneebench/knee/results"
)

// rows is the candidate's rows: one per routing policy (one in all for a
// single replica, whose routing means nothing).
func (s *search) rows() []results.PlanRow {
	c := s.c
	base := results.PlanRow{Config: c.Name, GPU: c.GPU, TP: c.TP, Model: c.Model, KVSequences: c.KVSequences, Calibration: c.Calibration,
		MaxModelLen: c.MaxModelLen}
	if c.Unfit != "" {
		base.Why = c.Unfit
		return []results.PlanRow{base}
	}
	step := s.stepOf
	// One replica's capacity first: what every fleet is built from.
	from := 1.0
	if s.o.Target > 0 {
		from = s.o.Target
	}
	per, why, err := s.capacity(1, RoundRobin, from, 0)
	base.PerReplica, base.Step = per, step(per)
	if err != nil {
		base.Why = stopped(err)
		return []results.PlanRow{base}
	}
	if per == 0 {
		base.Why = "meets the SLO at no load: at the lightest probed, " + why
		base.Predictions = s.n
		return []results.PlanRow{base}
	}
	base.Limit, base.LimitShare, base.LimitDetail = s.limit(per)
	if s.o.Target == 0 {
		return s.maxRows(base, per)
	}
	var out []results.PlanRow
	for _, routing := range s.o.Routings {
		row := s.targetRow(base, routing, per)
		out = append(out, row)
		if row.Replicas <= 1 {
			// One replica: the routing policies are the same fleet.
			break
		}
	}
	if s.o.Disagg != nil {
		out = append(out, s.pdRows(base)...)
	}
	return out
}

// targetRow is the fewest replicas behind routing that meet the SLO at the
// target, with the fleet's headroom.
func (s *search) targetRow(base results.PlanRow, routing Routing, per float64) results.PlanRow {
	row := base
	n, figures, why, err := s.replicas(routing, per)
	if err == nil && n > 0 && s.o.Seeds > 1 {
		row.Seeds = s.o.Seeds
		var note string
		n, figures, row.SeedsMet, note, err = s.robust(n, routing, figures)
		if n == 0 {
			why = note
		} else {
			row.Cliff = note
		}
	}
	if err == nil && n > 0 {
		row.ModeEdge, err = s.modeEdge(n, routing, figures)
	}
	switch {
	case err != nil:
		row.Why = stopped(err)
	case n == 0:
		row.Why = why
	default:
		row.Replicas, row.GPUs, row.Meets, row.AtTarget = n, n*s.c.TP, true, figures
		if n > 1 {
			row.Routing = string(routing)
		}
		// The fleet holds about its replicas' sum: start there, the
		// target known to meet.
		head, _, err := s.capacity(n, routing, math.Max(per*float64(n), s.o.Target), s.o.Target)
		if err != nil {
			row.Why = stopped(err)
		}
		row.Headroom, row.Step = head, s.stepOf(head)
	}
	row.Predictions = s.n
	return row
}

// maxRows is the largest load the candidate's budget holds, split into
// Budget/TP replicas behind each routing policy.
func (s *search) maxRows(base results.PlanRow, per float64) []results.PlanRow {
	n := max(s.c.Budget/s.c.TP, 1)
	var out []results.PlanRow
	for _, routing := range s.o.Routings {
		row := base
		row.Replicas, row.GPUs = n, n*s.c.TP
		if n > 1 {
			row.Routing = string(routing)
		}
		head, why, err := s.capacity(n, routing, per*float64(n), 0)
		row.Headroom, row.Step = head, s.stepOf(head)
		switch {
		case err != nil:
			row.Why = stopped(err)
		case head == 0:
			row.Why = why
		default:
			row.Meets = true
			if _, _, r, err := s.meets(n, routing, head); err == nil && r != nil {
				row.AtTarget = figuresOf(s.o.SLO, r, head)
			}
		}
		row.Predictions = s.n
		out = append(out, row)
		if n <= 1 {
			break
		}
	}
	return out
}
