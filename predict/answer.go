package predict

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
)

// Question is a capacity question: a workload (a series, sized) at a
// target load, its SLO, the configurations to search and their prices.
type Question struct {
	Candidates []*Candidate
	Series     *bench.Series
	// Base is the configuration every level adds its own to.
	Base results.Config
	// Axis is "rate" or "concurrency", Target the load to serve; FindMax
	// asks for the largest load each candidate's GPUs hold instead.
	Axis        string
	Target      float64
	FindMax     bool
	SLO         results.SLO
	Window      time.Duration
	Routings    []Routing
	MaxReplicas int
	Parallel    int
	// Prices are per GPU-hour by GPU; PriceSource says whose they are.
	Prices      map[string]float64
	PriceSource string
	// MemoryBudget is the memory the predictions may take (0:
	// MemoryBudget()).
	MemoryBudget int64
	// Calibrated says the candidates are a fitted models file's, whose fit
	// the plan states.
	Calibrated bool
	// ImageTokens is what a request's images add to its size, by the
	// candidates' vision rule (0: no images).
	ImageTokens float64
	// Seeds is how many arrival schedules a fleet must meet the SLO on.
	Seeds int
	// Day, when set, asks how the answer fares through a day of traffic
	// under autoscaling (Target is then the day's peak).
	Day *DayQuestion
	// Searched, when set, is told of each configuration searched (see
	// PlanOptions.Searched), for progress.
	Searched func(rows []results.PlanRow, predictions int64)
	// Disagg, when set, weighs disaggregated splits beside aggregated
	// replicas.
	Disagg *PlanDisagg
}

// Answer searches every candidate (Plan), prices and orders the rows,
// and says what the answer stands on. Cancelling ctx stops the search;
// the plan says it was interrupted.
func Answer(ctx context.Context, q Question) *results.Plan {
	first := q.firstFit()
	size := q.Series.MeanSize()
	if size > 0 {
		size += q.ImageTokens
	}
	for _, cand := range q.Candidates {
		if cand.Unfit == "" && size > 0 {
			if blocks, bt, err := cand.Target.KVCapacity(); err == nil {
				cand.KVSequences = SequencesHeld(blocks, bt, size)
			}
		}
		if cand.Unfit == "" {
			cand.MaxModelLen = cand.Target.StartLimit()
		}
	}
	levels := q.Series.Levels(first.Target, q.Axis, q.Base)
	maxLoad := MaxPlanLoad(q.Axis, q.Window, size, q.parallel(), cmp.Or(q.MemoryBudget, MemoryBudget()))
	opts := PlanOptions{Candidates: q.Candidates, Axis: q.Axis, Target: q.Target, SLO: q.SLO,
		Level:  func(load float64) (*bench.Level, error) { return levels(0, load) },
		Window: q.Window.Seconds(), Routings: q.Routings, MaxReplicas: q.MaxReplicas, Parallel: q.Parallel, MaxLoad: maxLoad, Searched: q.Searched, Seeds: q.Seeds, Disagg: q.Disagg}
	rows, predictions := Plan(ctx, opts)
	for i := range rows {
		Price(&rows[i], q.Prices[rows[i].GPU])
	}
	SortPlan(rows, q.FindMax)
	p := &results.Plan{SchemaVersion: results.SchemaVersion, Kind: results.PlanKind, Config: q.Base, Axis: q.Axis,
		Target: q.Target, FindMax: q.FindMax, SLO: q.SLO, WindowS: q.Window.Seconds(), Prices: q.Prices, PriceSource: q.PriceSource, Rows: rows,
		Predictions: predictions, Disaggregated: q.Disagg != nil}
	if q.Day != nil && !q.FindMax && ctx.Err() == nil {
		var n int
		p.Day, n = planDay(ctx, q.Day, opts, rows, q.Candidates, q.Prices)
		p.Predictions += n
	}
	p.Interrupted = ctx.Err() != nil
	if q.FindMax {
		p.Target = 0
	}
	if slices.ContainsFunc(rows, func(r results.PlanRow) bool { return r.Headroom >= maxLoad-r.Step || r.PerReplica >= maxLoad-r.Step }) {
		p.Notes = append(p.Notes, fmt.Sprintf("the search stops at %g (the most this machine's memory predicts in a --duration): a headroom there means at least that much, not a limit found",
			math.Floor(maxLoad)))
	}
	for _, r := range rows {
		if f := r.AtTarget; r.Meets && f != nil && f.BindingClass != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("binding class: %s — the class closest to its own SLO at the target on %s (%.0f%% of its nearest bound left)",
				f.BindingClass, r.Config, 100*f.BindingSlack))
			break
		}
	}
	if size > 0 {
		what := "prompt and answer"
		if q.ImageTokens > 0 {
			what = fmt.Sprintf("prompt, its images' %.0f, and answer", q.ImageTokens)
		}
		p.Notes = append(p.Notes, fmt.Sprintf("KV seqs: sequences of the workload's size as asked (%.0f tokens, %s) one replica's KV cache holds", size, what))
	}
	if q.Calibrated {
		if note := first.Target.FitNote(); note != "" {
			p.Notes = append(p.Notes, note)
		}
		p.Caveat = first.Target.FitCaveat()
	} else {
		p.Notes = append(p.Notes, "every figure is the presets' cost model in virtual time (knee presets shows its tuning and docs/fidelity.md its errors): measure the configuration chosen before buying a fleet of it")
	}
	return p
}

// parallel is how many candidates are searched at once.
func (q Question) parallel() int {
	return cmp.Or(q.Parallel, runtime.GOMAXPROCS(0))
}

// Check refuses a question whose target cannot be predicted in the
// memory the machine gives predictions, saying what fits. It needs the
// series sized.
func (q Question) Check() error {
	if q.FindMax {
		return nil
	}
	l := LevelsSpec{Axis: q.Axis, Loads: []float64{q.Target}, Window: q.Window, Tokens: q.Series.MeanSize(),
		Parallel: q.parallel(), Budget: q.MemoryBudget, WindowFlag: "--duration"}
	return l.Check()
}

// firstFit is the first candidate that fits its model.
func (q Question) firstFit() *Candidate {
	for _, cand := range q.Candidates {
		if cand.Unfit == "" {
			return cand
		}
	}
	return nil
}

// FirstFit is the first candidate that fits its model, or nil: the
// series is sized against it.
func FirstFit(cands []*Candidate) *Candidate { return Question{Candidates: cands}.firstFit() }

// SortPlan orders a plan's rows cheapest first: those that meet the SLO
// by cost per hour (then GPUs, then the largest headroom), those that do
// not after them, in the candidates' order; finding the largest load,
// the cheapest per million output tokens first.
func SortPlan(rows []results.PlanRow, findMax bool) {
	slices.SortStableFunc(rows, func(a, b results.PlanRow) int {
		if a.Meets != b.Meets {
			if a.Meets {
				return -1
			}
			return 1
		}
		if !a.Meets {
			return 0
		}
		key := func(r results.PlanRow) []float64 {
			if findMax {
				return []float64{orInf(r.CostPerMOutputTokens), -r.Headroom}
			}
			return []float64{orInf(r.CostPerHour), float64(r.GPUs), -r.Headroom}
		}
		ka, kb := key(a), key(b)
		for i := range ka {
			if ka[i] != kb[i] {
				if ka[i] < kb[i] {
					return -1
				}
				return 1
			}
		}
		return 0
	})
}

// orInf is v, or +Inf for no price.
func orInf(v float64) float64 {
	if v <= 0 {
		return math.Inf(1)
	}
	return v
}

// Price fills a row's costs from a price per GPU-hour.
func Price(r *results.PlanRow, perGPUHour float64) {
	if perGPUHour <= 0 || r.GPUs == 0 {
		return
	}
	r.CostPerHour = perGPUHour * float64(r.GPUs)
	if a := r.AtTarget; a != nil && a.OutputTokensPerS > 0 {
		r.CostPerMOutputTokens = r.CostPerHour / (a.OutputTokensPerS * 3600) * 1e6
	} else if a != nil && a.PromptTokensPerS > 0 {
		r.CostPerMPromptTokens = r.CostPerHour / (a.PromptTokensPerS * 3600) * 1e6
	}
}
