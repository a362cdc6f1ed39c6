package predict

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
)

// Candidate is one configuration a plan considers: a model served by TP
// GPUs of one kind per replica.
type Candidate struct {
	// Name is the preset it is (GPU[xN]/MODEL@DTYPE), or what the models
	// file came from.
	Name, GPU, Model string
	TP               int
	Target           Target
	// Budget, when finding the largest load a fleet holds, is its GPUs in
	// all: Budget/TP replicas.
	Budget int
	// Unfit, when set, says why the configuration cannot serve at all
	// (its weights leave no KV cache); it is listed, never predicted.
	Unfit string
	// KVSequences is how many sequences of the workload's mean size one
	// replica's KV cache holds (0: unknown).
	KVSequences int
	// MaxModelLen is StartLimit: the longest max_model_len vLLM starts it
	// with, when under the model's context (0: it starts at the whole).
	MaxModelLen int
	// Calibration is how its GPU's cost model was tuned: results'
	// CalibrationMeasured, CalibrationFitted or CalibrationApriori.
	Calibration string
}

// PlanOptions is a capacity question.
type PlanOptions struct {
	Candidates []*Candidate
	// Level is the workload at a load (a rate, or streams): a series'
	// first level, prepared afresh for each prediction.
	Level func(load float64) (*bench.Level, error)
	// Axis is "rate" or "concurrency"; Target the load to serve, or 0 to
	// find the largest load each candidate's budget of GPUs holds.
	Axis   string
	Target float64
	SLO    results.SLO
	// Window is each level's simulated window, for the early verdict.
	Window   float64
	Routings []Routing
	// MaxLoad bounds the loads probed (0: 100,000): the most the
	// machine's memory predicts in a window (MaxPlanLoad).
	MaxLoad float64
	// MaxReplicas bounds the replicas tried (0: 64).
	MaxReplicas int
	// Step is the bisection's resolution, relative to the load (0: 2%);
	// a closed loop's is one stream.
	Step float64
	// Parallel bounds the candidates searched at once (0: one per CPU).
	Parallel int
	// Seeds is how many arrival schedules a fleet must meet the SLO on
	// at the target to count (0 or 1: the one seed).
	Seeds int
	// Searched, when set, is told of each candidate searched, with its
	// rows and the predictions made so far (from any goroutine).
	Searched func(rows []results.PlanRow, predictions int64)
	// Disagg, when set, weighs prefill/decode splits of each candidate
	// beside its aggregated replicas (a target load only).
	Disagg *PlanDisagg
}

// maxPlanLoad is the highest rate (or streams) a search probes.
const maxPlanLoad = 100_000

// minPlanRate is the lowest rate a search probes: a candidate that misses
// the SLO even there meets it at no load.
const minPlanRate = 0.01

// Plan answers the capacity question: for every candidate and routing
// policy, the fewest replicas that meet the SLO at the target (with the
// figures there and the largest load they still meet, found by
// bisection), or, finding the largest load, what each split of the
// budget into replicas holds. Rows come back in the candidates' order;
// cancelling ctx stops the search, the rows so far marked.
func Plan(ctx context.Context, o PlanOptions) ([]results.PlanRow, int) {
	if o.MaxReplicas <= 0 {
		o.MaxReplicas = 64
	}
	if o.MaxLoad <= 0 {
		o.MaxLoad = maxPlanLoad
	}
	if o.Step <= 0 {
		o.Step = 0.02
	}
	par := o.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	memo := &Memo{}
	noITL := !slices.ContainsFunc(o.SLO.Bounds, func(b results.Bound) bool { return b.Metric == "itl" })
	rows := make([][]results.PlanRow, len(o.Candidates))
	var predictions atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	for i, c := range o.Candidates {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			s := &search{o: o, c: c, ctx: ctx, predictions: &predictions, memo: memo, noITL: noITL}
			rows[i] = s.rows()
			if o.Searched != nil {
				o.Searched(rows[i], predictions.Load())
			}
		}()
	}
	wg.Wait()
	var out []results.PlanRow
	for _, r := range rows {
		out = append(out, r...)
	}
	return out, int(predictions.Load())
}

// search is one candidate's.
type search struct {
	o           PlanOptions
	c           *Candidate
	ctx         context.Context
	predictions *atomic.Int64
	n           int // this candidate's predictions
	// memo is what the content side said of each request, the same for
	// every candidate; noITL keeps no chunk times when no bound needs
	// them.
	memo  *Memo
	noITL bool
}

// meets predicts the candidate at load and judges it.
func (s *search) meets(replicas int, routing Routing, load float64) (bool, string, *results.Run, error) {
	return s.meetsOn(replicas, routing, load, 0)
}

// meetsOn is meets on the kth other arrival schedule (0: the series').
func (s *search) meetsOn(replicas int, routing Routing, load float64, k int) (bool, string, *results.Run, error) {
	return s.meetsWith(&Virtual{Target: s.c.Target, Replicas: replicas, Routing: routing, NoHistograms: true}, load, k)
}

// meetsWith predicts v at load on the kth other arrival schedule and
// judges it.
func (s *search) meetsWith(v *Virtual, load float64, k int) (bool, string, *results.Run, error) {
	if err := s.ctx.Err(); err != nil {
		return false, "", nil, err
	}
	expected := load * s.o.Window
	if s.o.Axis == "concurrency" {
		expected = math.Inf(1) // a closed loop's count is not known ahead
	}
	lv, err := s.o.Level(load)
	if err != nil {
		return false, err.Error(), nil, nil
	}
	if req, ok := lv.Work.(bench.Requests); ok && k > 0 {
		req.Load.Seed += uint64(k) * 7919
		lv.Work = req
	}
	if _, ok := lv.Work.(bench.Requests); ok {
		// A call's turns are not the load's arrivals, so the early verdict,
		// which counts records against the arrivals expected, is for
		// requests alone.
		v.Memo, v.NoITL = s.memo, s.noITL
		if !math.IsInf(expected, 1) {
			v.Abandon = hopeless(s.o.SLO, expected)
		}
	}
	oom := false
	v.OutOfMemory = func() { oom = true }
	r, err := v.Run(s.ctx, lv)
	s.n++
	s.predictions.Add(1)
	if oom {
		// Not a miss: the load could not be judged.
		return false, "", nil, ErrOutOfMemory
	}
	if err != nil {
		return false, err.Error(), nil, nil
	}
	if s.ctx.Err() != nil {
		return false, "", nil, s.ctx.Err()
	}
	ok, why := judge(s.o.SLO, r, s.o.Axis, load)
	return ok, why, r, nil
}

// robust is the fewest replicas, from n (which meets the SLO at the target
// on the series' schedule), that meet it on every one of the plan's
// seeds, with their figures and on how many seeds n met; cliff says so
// when n itself did not meet it on them all ("" when it did). It gives up
// four replicas past n, as a fleet that needs more is no longer the same
// answer.
func (s *search) robust(n int, routing Routing, figures *results.PlanFigures) (int, *results.PlanFigures, int, string, error) {
	t := s.o.Target
	first := 0
	for m := n; m <= min(n+4, s.o.MaxReplicas); m++ {
		met := 0
		var at *results.Run
		for k := range s.o.Seeds {
			if k == 0 && m == n {
				met++ // known
				continue
			}
			ok, _, r, err := s.meetsOn(m, routing, t, k)
			if err != nil {
				return 0, nil, 0, "", err
			}
			if k == 0 {
				at = r
			}
			if ok {
				met++
			}
		}
		if m == n {
			first = met
		}
		if met == s.o.Seeds {
			if m == n {
				return n, figures, met, "", nil
			}
			return m, figuresOf(s.o.SLO, at, t), first, fmt.Sprintf("on a cliff: %s met the SLO on %d of %d arrival schedules; %d meet it on all", replicasText(n), first, s.o.Seeds, m), nil
		}
	}
	return 0, nil, first, fmt.Sprintf("%s met the SLO on %d of %d arrival schedules, and four more do not meet it on all", replicasText(n), first, s.o.Seeds), nil
}

// replicas is the fewest replicas behind routing that meet the SLO at the
// target, with their figures there, starting from what one replica's
// capacity per suggests; 0 and why when none up to MaxReplicas does.
func (s *search) replicas(routing Routing, per float64) (int, *results.PlanFigures, string, error) {
	t := s.o.Target
	n := max(int(math.Ceil(t/per)), 1)
	if n > s.o.MaxReplicas {
		unit := "/s"
		if s.o.Axis == "concurrency" {
			unit = " streams"
		}
		return 0, nil, fmt.Sprintf("needs about %d replicas (one holds %.3g%s), past --max-replicas %d", n, per, unit, s.o.MaxReplicas), nil
	}
	ok, why, r, err := s.meets(n, routing, t)
	if err != nil {
		return 0, nil, "", err
	}
	if ok {
		// Fewer may do: a fleet can hold more than its replicas' sum.
		best := r
		for n > 1 {
			ok2, _, r2, err := s.meets(n-1, routing, t)
			if err != nil {
				return 0, nil, "", err
			}
			if !ok2 {
				break
			}
			n, best = n-1, r2
		}
		return n, figuresOf(s.o.SLO, best, t), "", nil
	}
	for n < s.o.MaxReplicas {
		n++
		ok, why, r, err = s.meets(n, routing, t)
		if err != nil {
			return 0, nil, "", err
		}
		if ok {
			return n, figuresOf(s.o.SLO, r, t), "", nil
		}
	}
	return 0, nil, fmt.Sprintf("%d replicas still miss the SLO (%s)", n, why), nil
}

// capacity is the largest load at which replicas behind routing meet the
// SLO, to within the step, searching from load (known, when above 0, to
// meet at good); 0 (and why, at the lightest load probed) when none does.
func (s *search) capacity(replicas int, routing Routing, from, good float64) (float64, string, error) {
	probe := func(load float64) (bool, string, error) {
		if good > 0 && load <= good {
			return true, "", nil
		}
		ok, why, _, err := s.meets(replicas, routing, load)
		return ok, why, err
	}
	return Bisect(from, s.minLoad(), s.o.MaxLoad, s.stepOf, s.round, probe)
}

// minLoad is the lightest load a search probes.
func (s *search) minLoad() float64 {
	if s.o.Axis == "concurrency" {
		return 1
	}
	return minPlanRate
}

// stepOf is the bisection's resolution near load.
func (s *search) stepOf(load float64) float64 {
	if s.o.Axis == "concurrency" {
		return 1
	}
	return math.Max(s.o.Step*load, minPlanRate)
}

// round is a load as the axis takes it: whole streams for a closed loop.
func (s *search) round(load float64) float64 {
	if s.o.Axis == "concurrency" {
		return math.Max(math.Floor(load), 1)
	}
	return load
}

// figuresOf are a predicted level's figures, the SLO's among them.
func figuresOf(slo results.SLO, r *results.Run, load float64) *results.PlanFigures {
	f := &results.PlanFigures{Load: load, Bounds: map[string]float64{}, TTFTP50: r.Stats.TTFT.P50, TTFTP95: r.Stats.TTFT.P95,
		TPOTP50: r.Stats.TPOT.P50, TPOTP95: r.Stats.TPOT.P95, E2EP95: r.Stats.E2E.P95,
		OutputTokensPerS: r.Throughput.OutputTokensPerS, RequestsPerS: r.Throughput.RequestsPerS, ErrorRate: r.Requests.ErrorRate()}
	if r.Config.Pooled() {
		f.PromptTokensPerS = r.TokensPerS()
	}
	for _, b := range slo.Bounds {
		if v, ok := b.Value(r); ok {
			f.Bounds[b.Key()] = v
		}
	}
	if name, slack := bindingClass(r); name != "" {
		f.BindingClass, f.BindingSlack = name, slack
	}
	if g := r.GPU; g != nil {
		f.JoulesPerOutputToken, f.PowerW = g.JoulesPerOutputToken, g.PowerMeanW
	}
	f.Phases = r.Phases
	// The bound nearest its limit: what a fleet that meets the SLO would
	// break first.
	best := math.Inf(1)
	for _, b := range slo.Bounds {
		if v, ok := b.Value(r); ok && b.Ms > 0 && (b.Ms-v)/b.Ms < best {
			best = (b.Ms - v) / b.Ms
			f.BindingBound, f.BindingValue = b.Key(), v
		}
	}
	return f
}

// limit is what limits one replica at its capacity per, from its steps
// there ("" when the prediction fails).
func (s *search) limit(per float64) (string, float64, string) {
	r, t, err := s.tallied(1, RoundRobin, per)
	if err != nil {
		return "", 0, ""
	}
	b, _ := binding(figuresOf(s.o.SLO, r, per))
	return t.Limit(b.Metric, b.Percentile)
}

// replicasText is "1 replica" or "N replicas".
func replicasText(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}
