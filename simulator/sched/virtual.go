package sched

import "sort"

// Outcome is one request's simulated timeline.
type Outcome struct {
	ID           int64
	Arrival      float64
	FirstToken   float64
	LastToken    float64
	Tokens       int
	CachedTokens int
	Preemptions  int
}

// TTFT is the simulated time to first token, from arrival.
func (o Outcome) TTFT() float64 { return o.FirstToken - o.Arrival }

// E2E is the simulated time from arrival to the last token.
func (o Outcome) E2E() float64 { return o.LastToken - o.Arrival }

// RunVirtual executes the core over reqs in virtual time, with no sleeping
// at all: each step starts when the previous one ends, or at the next
// arrival when idle, and a request joins the first step that starts at or
// after its arrival. onStep, when set, sees every step. Outcomes come back
// in the order of reqs. A request the cache can never hold (knee sim and
// knee predict refuse one before it arrives) blocks the queue as it would
// in vLLM, and gets no token, nor what waits behind it: the run ends
// rather than step through empty time for ever.
func RunVirtual(cfg Config, reqs []Request, onStep func(*Step)) []Outcome {
	order := arrivalOrder(reqs)
	core := New(cfg)
	out := make([]Outcome, len(reqs))
	for i, r := range reqs {
		out[i] = Outcome{ID: r.ID, Arrival: r.Arrival}
	}
	next := 0
	now := 0.0
	for next < len(order) || !core.Idle() {
		if core.Idle() && reqs[order[next]].Arrival > now {
			now = reqs[order[next]].Arrival
		}
		for next < len(order) && reqs[order[next]].Arrival <= now {
			// Inside the core a request is known by its index in reqs.
			r := reqs[order[next]]
			r.ID = int64(order[next])
			core.Add(r)
			next++
		}
		st := core.Step(now)
		if st == nil {
			continue
		}
		if st.Running == 0 && len(st.Admitted) == 0 && len(st.Emitted) == 0 {
			// Nothing runs and the queue's head was not admitted to an
			// empty cache: it never will be, nor what waits behind it.
			if next == len(order) {
				break
			}
			now = max(st.End, reqs[order[next]].Arrival)
			continue
		}
		for _, e := range st.Emitted {
			o := &out[e.Seq.ID]
			if e.Index == 0 {
				o.FirstToken = st.End
				o.CachedTokens = e.Seq.CachedTokens
			}
			o.LastToken = st.End
			o.Tokens++
			o.Preemptions = e.Seq.Preemptions
		}
		if onStep != nil {
			onStep(st)
		}
		now = st.End
	}
	return out
}

// DisaggOutcome is one request's simulated timeline through a
// disaggregated model, with its phases.
type DisaggOutcome struct {
	Outcome
	Phases Phases
}

// RunDisaggVirtual is RunVirtual for a disaggregated model: arrivals
// join at their own times, every pool's steps and every transfer run
// until they end, and nothing sleeps. Outcomes come back in the order
// of reqs.
func RunDisaggVirtual(cfg DisaggConfig, reqs []Request) []DisaggOutcome {
	order := arrivalOrder(reqs)
	d := NewDisagg(cfg)
	out := make([]DisaggOutcome, len(reqs))
	for i, r := range reqs {
		out[i].Outcome = Outcome{ID: r.ID, Arrival: r.Arrival}
	}
	emit := func(st *Step) {
		for _, e := range st.Emitted {
			o := &out[e.Seq.ID]
			if e.Index == 0 {
				o.FirstToken = st.End
			}
			o.LastToken = st.End
			o.Tokens++
			o.Preemptions = e.Seq.Preemptions
		}
		for _, q := range st.Finished {
			out[q.ID].Phases, _ = d.Phases(q.ID)
			out[q.ID].CachedTokens = out[q.ID].Phases.CachedTokens
			d.Done(q.ID)
		}
	}
	for next := 0; next < len(order) || !d.Idle(); {
		if next < len(order) && reqs[order[next]].Arrival <= d.NextEvent() {
			r := reqs[order[next]]
			r.ID = int64(order[next])
			key := uint64(0)
			if r.IDs != nil {
				key = PrefixKey(r.IDs)
			}
			d.Add(r, key)
			d.Start(r.Arrival)
			next++
			continue
		}
		d.Advance(emit)
	}
	return out
}

// arrivalOrder is reqs' indices in arrival order, ties in reqs' order.
func arrivalOrder(reqs []Request) []int {
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return reqs[order[a]].Arrival < reqs[order[b]].Arrival })
	return order
}
