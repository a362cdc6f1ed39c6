package predict

import (
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/workload"
)

// refusedCost is the virtual time a refused request takes to come back.
// Without it a closed-loop worker whose requests all fail would send
// again at the same instant forever.
const refusedCost = 100e-6

// turnaround is how long after a request ends its client can act on it: a
// closed-loop worker's next request, or an open-loop arrival waiting for
// the slot it frees, reaches the server this much later. Its size hardly
// matters; that it is not zero does: the engine starts its next step the
// instant the last one ends, so, as against a live server, a follow-up can
// never be in the step that starts when its predecessor finished.
const turnaround = 1e-6

// cancelCheck is how many events a virtual level runs between looks at
// its context: often enough to stop within milliseconds, rarely enough to
// cost nothing.
const cancelCheck = 1024

// flight is one request inside the core.
type flight struct {
	rec      *record.Record
	worker   int
	measured bool
}

// send is a closed-loop worker's next request, due at a simulated time.
type send struct {
	at     float64
	worker int
}

// virtual is one level's simulated client and server: the core, the
// clock, and the requests in flight.
type virtual struct {
	// ctx ends the level early when cancelled (see Level).
	ctx           context.Context
	opts          Options
	prefixes      *workload.PrefixTracker
	fleet         *fleet
	contextLength int
	arrivals      *workload.Arrivals
	// trace gives the window's arrivals when the level replays one.
	trace    *workload.Arrivals
	now      float64
	index    int
	nextID   int64
	inflight map[int64]*flight
	measured []record.Record
	cut      int

	// Per phase.
	sends  []send // closed loop, in time order
	issued int
	slots  int // free --max-concurrency slots; < 0 means unlimited
	// releases are the times slots freed by finished requests become
	// usable, in order.
	releases []float64
	waiting  []float64
}

// phase sends n requests (or for d) from now, as bench's phase does, and
// runs the core until they have all finished (or the drain cut them).
func (v *virtual) phase(n int, d time.Duration, measured bool) driver.Window {
	load := v.opts.Load
	base := v.now
	var w driver.Window
	v.issued, v.sends, v.waiting, v.releases = 0, v.sends[:0], v.waiting[:0], v.releases[:0]
	v.slots = -1
	if load.MaxConcurrency > 0 {
		v.slots = load.MaxConcurrency
	}
	var dues []float64
	if load.Rate > 0 {
		if measured && v.trace != nil {
			// A trace's line k is the window's request k, whatever warmed up.
			v.index = 0
		}
		dues, w = v.draw(n, d, base, measured)
	} else {
		for worker := 0; worker < load.Concurrency; worker++ {
			v.sends = append(v.sends, send{at: base, worker: worker})
		}
	}
	windowEnd := math.Inf(1)
	if d > 0 {
		windowEnd = base + d.Seconds()
	}
	cutoff := math.Inf(1)
	drainSet := false
	armDrain := func(end float64) {
		if drainSet {
			return
		}
		drainSet = true
		if measured && load.DrainTimeout > 0 {
			cutoff = end + load.DrainTimeout.Seconds()
		}
	}
	next := 0
	for events := 0; ; events++ {
		if events%cancelCheck == 0 && v.ctx.Err() != nil {
			v.cutAll()
			return w
		}
		// Arrivals due by now queue for a slot and go as slots allow.
		for len(v.releases) > 0 && v.releases[0] <= v.now {
			v.releases = v.releases[1:]
			v.slots++
		}
		for next < len(dues) && dues[next] <= v.now {
			v.waiting = append(v.waiting, dues[next])
			next++
		}
		if v.now >= windowEnd && len(v.waiting) > 0 && v.slots == 0 {
			w.Unsent = int64(len(v.waiting) + len(dues) - next)
			v.waiting, next, dues = v.waiting[:0], 0, nil
		}
		for len(v.waiting) > 0 && v.slots != 0 {
			due := v.waiting[0]
			v.waiting = v.waiting[1:]
			v.start(due, max(due, v.now), v.now > due, -1, measured)
		}
		for len(v.sends) > 0 && v.sends[0].at <= v.now {
			s := v.sends[0]
			v.sends = v.sends[1:]
			v.issue(s, base, n, d, measured)
		}
		if load.Rate > 0 && next == len(dues) && len(v.waiting) == 0 {
			armDrain(min(windowEnd, v.now))
		} else if load.Rate <= 0 && len(v.sends) == 0 && (n > 0 && v.issued >= n || d > 0 && v.now >= windowEnd) {
			armDrain(min(windowEnd, v.now))
		}
		v.fleet.start(v.now)
		// On to the next event: a step's end, an arrival, a closed-loop
		// send, or a slot for an arrival waiting for one. Arrivals inside
		// a step go out when they are due and wait for the next step in
		// the engine, as against a live server.
		t := v.fleet.nextEnd()
		if next < len(dues) {
			t = min(t, dues[next])
		}
		if len(v.sends) > 0 {
			t = min(t, v.sends[0].at)
		}
		if len(v.releases) > 0 && len(v.waiting) > 0 {
			t = min(t, v.releases[0])
		}
		if !v.fleet.advance(&v.now, t, cutoff, v.complete, v.cutAll) {
			break
		}
	}
	return w
}

// draw takes the phase's arrivals from the level's one schedule exactly as
// bench's open loop does: offsets from the phase's first arrival, at most
// n of them, none at or past d.
func (v *virtual) draw(n int, d time.Duration, base float64, measured bool) ([]float64, driver.Window) {
	var dues []float64
	arrivals := v.arrivals
	if measured && v.trace != nil {
		arrivals = v.trace
	}
	count := driver.NewArrivalCount(dur(base), d, driver.Shard{}, 0)
	for phase := arrivals.Phase(n, d); ; {
		rel, ok := phase.Next()
		if !ok {
			break
		}
		count.Add(rel, 0)
		dues = append(dues, base+rel.Seconds())
	}
	return dues, count.Window()
}

// issue sends a closed-loop worker's next request if the phase has one
// left for it.
func (v *virtual) issue(s send, base float64, n int, d time.Duration, measured bool) {
	if n > 0 && v.issued >= n {
		return
	}
	if d > 0 && s.at-base >= d.Seconds() {
		return
	}
	v.issued++
	v.start(s.at, s.at, false, s.worker, measured)
}

// start sends one request due at due and sent at at: the simulator's
// content side decides what is said, then the core takes it, unless the
// server would refuse it.
func (v *virtual) start(due, at float64, waited bool, worker int, measured bool) {
	idx := v.index
	v.index++
	said := v.say(idx, measured)
	rec := &record.Record{Index: idx, Warmup: !measured, Tag: said.tag, Scheduled: dur(due), Sent: dur(at), Waited: waited, MaxTokens: said.maxTokens, PrefixShare: said.share}
	if v.slots > 0 {
		v.slots--
	}
	err := said.err
	if err == nil {
		err = engine.CheckFits(v.fleet.core(), said.plan)
	}
	if err != nil || said.sr.OutputLen == 0 {
		v.finish(rec, worker, refuse(rec, err, said.sr.PromptLen, at), measured)
		return
	}
	rec.PromptTokens, rec.CompletionTokens = said.sr.PromptLen, said.sr.OutputLen
	id := v.nextID
	v.nextID++
	sr := said.sr
	sr.Arrival, sr.ID = at, id
	v.fleet.add(sr)
	rec.ChunkTimes = make([]time.Duration, 0, sr.OutputLen)
	v.inflight[id] = &flight{rec: rec, worker: worker, measured: measured}
}

// say is what the content side says to request idx: from the memo when
// the level has one.
func (v *virtual) say(idx int, measured bool) *said {
	// Warm-ups are not memoised: their indices may be a trace's lines too.
	m := v.opts.Memo
	if !measured {
		m = nil
	}
	if m != nil {
		if s := m.get(idx); s != nil {
			return s
		}
	}
	req := v.opts.Source.Request(idx)
	if !measured {
		req = bench.WarmupRequest(req, idx)
	}
	s := &said{tag: req.Tag, maxTokens: req.MaxTokens}
	if measured {
		s.share = v.prefixes.Share(&req)
	}
	s.plan, s.err = v.opts.Target.Responder.Generate(v.opts.Target.genRequest(&req), v.contextLength)
	if s.err == nil {
		s.sr = engine.Request(s.plan, 0)
	}
	if m != nil {
		m.put(idx, s)
	}
	return s
}

// complete releases a step's tokens to their requests and finishes the
// requests whose last token it was.
func (v *virtual) complete(st *sched.Step) {
	stamp(st, func(id int64) *record.Record { return v.inflight[id].rec }, func(id int64) {
		f := v.inflight[id]
		delete(v.inflight, id)
		v.fleet.done(id)
		v.finish(f.rec, f.worker, st.End, f.measured)
	})
}

// finish frees the request's slot, keeps its record if measured, and lets
// its closed-loop worker send again at the simulated time at.
func (v *virtual) finish(r *record.Record, worker int, at float64, measured bool) {
	if v.slots >= 0 {
		// Finishes come in time order, so the releases stay sorted.
		v.releases = append(v.releases, at+turnaround)
	}
	if measured {
		v.measured = append(v.measured, *r)
	}
	if worker >= 0 {
		v.sends = insertByTime(v.sends, send{at: at + turnaround, worker: worker}, func(s send) float64 { return s.at })
	}
}

// cutAll ends every request still running, as the drain timeout does.
func (v *virtual) cutAll() {
	for _, id := range slices.Sorted(maps.Keys(v.inflight)) {
		f := v.inflight[id]
		v.fleet.abort(id)
		delete(v.inflight, id)
		f.rec.Class, f.rec.Done = record.ClassInterrupted, dur(v.now)
		if f.measured {
			v.measured = append(v.measured, *f.rec)
			v.cut++
		}
	}
	v.sends = v.sends[:0]
}
