package predict

import (
	"fmt"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
)

// modeEdgeShare is how near the percentile's tail the share of tokens
// stalled on prefill chunks puts a token-gap bound on a mode boundary:
// from 80% of the tail (a quarter more stalls fill it), a little more
// load, a longer window or another schedule can move the percentile from
// the fast mode to the stalled one (a 70B's ITL p95 at 24 ms or at 246
// ms, as 4.7% or 5.1% of tokens stall). StepTally.Limit names prefill
// stalls from the same share.
const modeEdgeShare = 0.8

// modeEdge says whether n replicas behind routing sit on a mode boundary
// at the target: the binding bound is on the gaps between tokens and the
// share of decoded tokens that waited on a prefill chunk is within reach
// of its percentile's tail, below it. It returns the note ("" when not on
// one), with the fewest replicas, up to four more, clear of the edge.
func (s *search) modeEdge(n int, routing Routing, figures *results.PlanFigures) (string, error) {
	b, ok := binding(figures)
	if !ok || (b.Metric != "itl" && b.Metric != "tpot") {
		return "", nil
	}
	tail := 1 - b.Percentile/100
	share, err := s.stalledShare(n, routing)
	if err != nil || share < modeEdgeShare*tail || share >= tail {
		return "", err
	}
	note := fmt.Sprintf("on a mode boundary: %s p%g is a fast step's gap, but %.1f%% of tokens waited on a prefill chunk where its tail is %.0f%%: a little more load, a longer window or another schedule puts it on the stalled steps",
		b.Metric, b.Percentile, 100*share, 100*tail)
	for m := n + 1; m <= min(n+4, s.o.MaxReplicas); m++ {
		sh, err := s.stalledShare(m, routing)
		if err != nil {
			return note, err
		}
		if sh < modeEdgeShare*tail {
			return note + fmt.Sprintf("; %s keep it under %.0f%% of the tail (%.1f%%)", replicasText(m), 100*modeEdgeShare, 100*sh), nil
		}
	}
	return note + "; four more replicas do not clear it", nil
}

// stalledShare predicts replicas behind routing at the target on the
// series' schedule and returns the share of decoded tokens that waited
// on a step carrying a prefill chunk.
func (s *search) stalledShare(replicas int, routing Routing) (float64, error) {
	_, t, err := s.tallied(replicas, routing, s.o.Target)
	if err != nil || t.Decoded == 0 {
		return 0, err
	}
	return float64(t.Stalled) / float64(t.Decoded), nil
}

// tallied predicts replicas behind routing at load on the series'
// schedule, counting its scheduler steps by what bounded them.
func (s *search) tallied(replicas int, routing Routing, load float64) (*results.Run, *StepTally, error) {
	lv, err := s.o.Level(load)
	if err != nil {
		return nil, nil, err
	}
	t := &StepTally{}
	v := &Virtual{Target: s.c.Target, Replicas: replicas, Routing: routing, NoHistograms: true, Tally: t}
	if _, ok := lv.Work.(bench.Requests); ok {
		v.Memo, v.NoITL = s.memo, s.noITL
	}
	r, err := v.Run(s.ctx, lv)
	if err == nil {
		err = s.ctx.Err()
	}
	if err != nil {
		return nil, nil, err
	}
	s.n++
	s.predictions.Add(1)
	return r, t, nil
}

// binding is the SLO bound nearest its limit in a plan's figures (false
// when none is).
func binding(f *results.PlanFigures) (results.Bound, bool) {
	if f == nil || f.BindingBound == "" {
		return results.Bound{}, false
	}
	b, _, err := results.ParseBounds(f.BindingBound)
	if err != nil || len(b) != 1 {
		return results.Bound{}, false
	}
	return b[0], true
}
