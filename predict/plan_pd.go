package predict

import (
	"fmt"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/sched"
)

// PlanDisagg asks a plan to weigh disaggregated serving: every split of a
// candidate's replicas into a prefill and a decode pool, each decode
// replica's KV arriving over a link of LinkGbps.
type PlanDisagg struct {
	LinkGbps float64
}

// pdRows is the candidate's disaggregated splits: for each prefill pool
// from one replica up, the fewest decode replicas that meet the SLO at
// the target (on every seed), until a bigger prefill pool and one decode
// replica cost more than the cheapest split found. A prefill pool no
// decode pool rescues is listed with why.
func (s *search) pdRows(base results.PlanRow) []results.PlanRow {
	best := s.o.MaxReplicas
	var out []results.PlanRow
	prev := 0 // the previous prefill pool's fewest decode replicas
	for p := 1; p+1 <= best && s.ctx.Err() == nil; p++ {
		row := base
		row.PrefillReplicas, row.KVLinkGbps, row.Routing = p, s.o.Disagg.LinkGbps, ""
		row.Limit, row.LimitShare, row.LimitDetail = "", 0, ""
		// No one replica of a split serves the load alone: it has no
		// per-replica capacity to state.
		row.PerReplica = 0
		d, r, why, err := s.fewestDecode(p, prev, best-p)
		row.Predictions = s.n
		switch {
		case err != nil:
			row.Why = stopped(err)
			return append(out, row)
		case d == 0:
			row.Why = fmt.Sprintf("%dP: no decode pool up to %d replicas in all meets the SLO (%s)", p, best, why)
			out = append(out, row)
			continue
		}
		row.DecodeReplicas, row.Replicas, row.GPUs, row.Meets = d, p+d, (p+d)*s.c.TP, true
		row.AtTarget = figuresOf(s.o.SLO, r, s.o.Target)
		if ph := r.Phases; ph != nil {
			b, _ := binding(row.AtTarget)
			row.Limit, row.LimitShare = ph.Bound(b.Metric)
		}
		head, _, err := s.pdCapacity(p, d)
		if err != nil {
			row.Why = stopped(err)
		}
		row.Headroom, row.Step = head, s.stepOf(head)
		row.Predictions = s.n
		out = append(out, row)
		best, prev = min(best, p+d), d
	}
	return out
}

// fewestDecode is the fewest decode replicas, at most most, that meet
// the SLO at the target behind p prefill replicas, on every seed, with
// the prediction there; hi, when above 0, is known to be enough for
// fewer prefill replicas (more prefill never needs more decode). 0 and
// why when none does.
func (s *search) fewestDecode(p, hi, most int) (int, *results.Run, string, error) {
	lo, why := 0, ""
	runs := map[int]*results.Run{}
	try := func(d int) (bool, error) {
		ok, w, r, err := s.meetsPD(p, d, 0)
		runs[d], why = r, w
		return ok, err
	}
	if hi > most {
		hi = 0
	}
	if hi == 0 {
		// Doubling: 1, 2, 4, … until some meets.
		for d := 1; ; d = min(2*d, most) {
			ok, err := try(d)
			if err != nil {
				return 0, nil, "", err
			}
			if ok {
				hi = d
				break
			}
			if lo = d; d == most || s.prefillBound(runs[d]) {
				return 0, nil, why, nil
			}
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := try(mid)
		if err != nil {
			return 0, nil, "", err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	if runs[hi] == nil {
		if _, err := try(hi); err != nil {
			return 0, nil, "", err
		}
	}
	return s.robustPD(p, hi, most, runs[hi])
}

// robustPD is the fewest decode replicas from d (which met the SLO on
// the series' schedule) that meet it on every seed, four more at most.
func (s *search) robustPD(p, d, most int, r *results.Run) (int, *results.Run, string, error) {
	for ; d <= most; d++ {
		all := true
		for k := 1; k < s.o.Seeds && all; k++ {
			ok, _, _, err := s.meetsPD(p, d, k)
			if err != nil {
				return 0, nil, "", err
			}
			all = ok
		}
		if all {
			if r == nil {
				_, _, r, _ = s.meetsPD(p, d, 0)
			}
			return d, r, "", nil
		}
		r = nil
	}
	return 0, nil, fmt.Sprintf("met on one arrival schedule, not on all %d", s.o.Seeds), nil
}

// prefillBound says what failed a prediction was its prefill pool: it
// was saturated, or its queue and compute took most of the time to
// first token under the bound the prediction broke most. More decode
// replicas cannot help it.
func (s *search) prefillBound(r *results.Run) bool {
	if r == nil || r.Phases == nil {
		return false
	}
	if b := r.Phases.Busy; b != nil && b.Prefill > 0.97 {
		return true
	}
	worst, ok := binding(figuresOf(s.o.SLO, r, s.o.Target))
	if !ok {
		return false
	}
	part, share := r.Phases.Bound(worst.Metric)
	return part == "prefill compute" && share > 0.5
}

// pdCapacity is the largest load p prefill and d decode replicas meet
// the SLO at, to within the step, the target known to meet.
func (s *search) pdCapacity(p, d int) (float64, string, error) {
	t := s.o.Target
	probe := func(load float64) (bool, string, error) {
		if load <= t {
			return true, "", nil
		}
		ok, why, _, err := s.meetsPDAt(p, d, load, 0)
		return ok, why, err
	}
	return Bisect(t, s.minLoad(), s.o.MaxLoad, s.stepOf, s.round, probe)
}

// meetsPD predicts p prefill and d decode replicas at the target on the
// kth arrival schedule and judges them.
func (s *search) meetsPD(p, d, k int) (bool, string, *results.Run, error) {
	return s.meetsPDAt(p, d, s.o.Target, k)
}

// meetsPDAt is meetsPD at load.
func (s *search) meetsPDAt(p, d int, load float64, k int) (bool, string, *results.Run, error) {
	cfg, ok := s.c.Target.Disagg(0)
	if !ok {
		c, _, err := s.c.Target.Config()
		if err != nil {
			return false, err.Error(), nil, nil
		}
		cfg = sched.DisaggConfig{Prefill: c, Decode: c, Routing: RoundRobin}
	}
	cfg.PrefillReplicas, cfg.DecodeReplicas, cfg.LinkGbps = p, d, s.o.Disagg.LinkGbps
	return s.meetsWith(&Virtual{Target: s.c.Target, Disagg: &cfg, NoHistograms: true}, load, k)
}
