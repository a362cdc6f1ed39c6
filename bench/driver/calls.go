package driver

import (
	"context"
	"errors"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// CallLoad says how multi-turn calls arrive: open loop, Poisson, each
// sending its turns in order, the next after its gap once the last is
// answered.
type CallLoad struct {
	// Rate is call arrivals per second (open loop); Concurrency instead
	// runs that many calls at once, closed loop: each slot starts its
	// next call (a session, every turn in order) as its last one ends.
	Rate        float64
	Concurrency int
	// Calls or Duration bounds the arrivals of the measured window.
	Calls    int
	Duration time.Duration
	// MaxConcurrentCalls caps calls in progress; arrivals beyond it are
	// shed and counted, never silently dropped. Zero means no cap.
	MaxConcurrentCalls int
	Seed               uint64
	// DrainTimeout bounds the wait for calls still in progress once the
	// arrivals have ended; turns still running then are cut and counted
	// as interrupted, and turns not yet sent never are. Zero waits for
	// every call.
	DrainTimeout time.Duration
	// Shard, when set, runs only this process's calls (call k when k mod
	// Count is Index); the cap on calls is split alike.
	Shard Shard
}

// Validate reports every problem with l at once.
func (l CallLoad) Validate() error {
	var errs []error
	switch {
	case l.Concurrency > 0 && (l.Rate != 0 || l.MaxConcurrentCalls != 0):
		errs = append(errs, errors.New("closed-loop calls (Concurrency) take no Rate and no MaxConcurrentCalls"))
	case l.Concurrency == 0 && !(l.Rate > 0):
		errs = append(errs, ErrNoCallRate)
	}
	switch {
	case l.Calls < 0 || l.Duration < 0 || l.MaxConcurrentCalls < 0 || l.DrainTimeout < 0 || l.Concurrency < 0:
		errs = append(errs, errors.New("counts and durations must not be negative"))
	case l.Calls == 0 && l.Duration == 0:
		// Unbounded, the arrivals would never end.
		errs = append(errs, ErrCallsUnbounded)
	}
	if err := l.Shard.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

var (
	// ErrNoCallRate: calls arrive at CallLoad.Rate per second, which must
	// be positive, unless CallLoad.Concurrency runs them closed loop.
	ErrNoCallRate = errors.New("calls need a positive Rate (calls per second) or a Concurrency")
	// ErrCallsUnbounded: calls need CallLoad.Calls or Duration to end.
	ErrCallsUnbounded = errors.New("calls need a bound: Calls or Duration")
)

// Calls is one level of calls. A call sends its warm-up turns (the voice
// workload's turn 1, which warms its prefix) and then its measured turns,
// each after its gap with the whole history, measured from when it was
// due (the end of the gap).
type Calls struct {
	Load   CallLoad
	Source workload.Calls
	// StartAt, when set, is the wall instant the call schedule starts
	// (see Requests.StartAt).
	StartAt                    time.Time
	OnWindowStart, OnWindowEnd func(ctx context.Context)
}

// CallTally is what a level of calls counts beside its turns' records:
// the call arrivals and what became of them, and the window's times.
type CallTally struct {
	// Drawn counts the calls of the one schedule, every shard's; Arrivals
	// this shard's, and InWindow those of them inside the schedule window
	// (all, but for a window bounded by a count of calls, which ends at its
	// last arrival).
	Drawn, Arrivals, InWindow int64
	// Offered is the schedule's offered rate, by the window rules
	// (ArrivalCount.Window).
	Offered float64
	// OfferedTurns counts the measured turns of this shard's arrivals, and
	// InWindowTurns those of the calls inside the schedule window.
	OfferedTurns, InWindowTurns int64
	// WarmupTurns counts the turns sent but not measured (voice's turn 1).
	WarmupTurns              int64
	Started, Completed, Shed int64
	// Failed counts the calls a failed turn ended (a call stops at its
	// first failure), and WarmupFailed those whose failed turn was an
	// unmeasured warm-up turn, which no latency or error figure counts.
	Failed, WarmupFailed int64
	// CallTime sums the completed calls' durations, arrival to last turn.
	CallTime time.Duration
	// WindowStart is when the call schedule started on the run's clock;
	// LastArrival is the last call's offset from it (every shard's), and
	// ArrivalsEnd and WindowEnd are on the run's clock.
	WindowStart, LastArrival, ArrivalsEnd, WindowEnd time.Duration
	// AchievedConcurrency is the mean number of calls in progress while
	// calls still arrived.
	AchievedConcurrency float64
	DrainCut            bool
}

// CallsOutcome is what a level of calls did beyond its turns' records.
type CallsOutcome struct {
	Tally CallTally
	// Late is how long after StartAt the driver came to it.
	Late time.Duration
}

// RunCalls runs a level of calls until every call that arrived has ended
// (or the drain cut it). Cancelling ctx stops arrivals and turns and cuts
// what is in flight; what was measured is kept.
func (d *Driver) RunCalls(ctx context.Context, lv Calls) (CallsOutcome, error) {
	var out CallsOutcome
	if err := lv.Load.Validate(); err != nil {
		return out, err
	}
	base := d.clock.Now()
	if wall := d.clock.Wall(); !lv.StartAt.IsZero() && !wall.IsZero() {
		base = lv.StartAt.Sub(wall)
		for d.clock.Now() < base && ctx.Err() == nil {
			d.clock.Wait(ctx, base, false)
		}
		out.Late = max(d.clock.Now()-base, 0)
	}
	if lv.OnWindowStart != nil && ctx.Err() == nil {
		lv.OnWindowStart(ctx)
	}
	p := &calls{d: d, src: lv.Source, load: lv.Load, base: base, cutoff: Never, areaAt: max(base, 0)}
	if err := p.arrive(); err != nil {
		return out, err
	}
	d.run(ctx, p)
	now := d.clock.Now()
	p.progress(now)
	t := &p.tally
	w := p.count.Window()
	t.WindowStart, t.Drawn, t.Arrivals, t.InWindow, t.Offered = base, int64(p.count.Drawn()), w.Arrivals, w.InWindow, w.Offered
	t.OfferedTurns, t.InWindowTurns = p.count.Weights()
	t.LastArrival, t.ArrivalsEnd, t.WindowEnd = p.count.Last(), p.arrivalsEnd, now
	if span := (p.arrivalsEnd - p.areaStart()).Seconds(); span > 0 {
		t.AchievedConcurrency = p.area / span
	}
	out.Tally = p.tally
	if lv.OnWindowEnd != nil && ctx.Err() == nil {
		lv.OnWindowEnd(ctx)
	}
	return out, nil
}

// call is one call in progress.
type call struct {
	src     workload.Calls
	script  workload.Call
	answers []string
	// lastResponse is the last answer's response id (ServerHistory).
	lastResponse string
	// exchanges are each finished turn's tool rounds (the calls and
	// their results, between its user message and its answer), and
	// exchange the turn in progress'; rounds counts its rounds.
	exchanges [][]workload.Message
	exchange  []workload.Message
	rounds    int
	arrival   time.Duration
	index     int
	// turn is the turn in flight, or next (from 1).
	turn int
}

// calls is a level of calls as the dispatcher drives it.
type calls struct {
	d    *Driver
	src  workload.Calls
	load CallLoad
	base time.Duration

	sched   *workload.Phase
	count   *ArrivalCount
	nextDue time.Duration
	nextIdx int
	hasNext bool
	cap     int
	// turns are the calls' next turns, due at the end of their gaps.
	turns     timeQueue[*call]
	turnIndex int

	inflight, inProgress int
	// area integrates the calls in progress over time (call-seconds) up to
	// the end of the arrivals.
	area   float64
	areaAt time.Duration

	// closed runs the calls closed loop (CallLoad.Concurrency); nil for
	// the open loop's schedule.
	closed *closedCalls

	arrivalsEnded, stopped bool
	arrivalsEnd, cutoff    time.Duration
	cut, cutDue            bool
	tally                  CallTally
}

// areaStart is where the integral of calls in progress starts.
func (p *calls) areaStart() time.Duration { return max(p.base, 0) }

// draw takes the next of this shard's calls from the one schedule.
func (p *calls) draw() {
	for {
		rel, ok := p.sched.Next()
		if !ok {
			p.hasNext = false
			return
		}
		k, mine := p.count.Add(rel, int64(p.src.MeasuredTurns(p.count.Drawn())))
		if mine {
			p.nextDue, p.nextIdx, p.hasNext = p.base+rel, k, true
			return
		}
	}
}

// progress integrates the calls in progress up to t (while calls arrive).
func (p *calls) progress(t time.Duration) {
	end := t
	if p.arrivalsEnded {
		end = min(t, p.arrivalsEnd)
	}
	if end > p.areaAt {
		p.area += float64(p.inProgress) * (end - p.areaAt).Seconds()
		p.areaAt = end
	}
}

func (p *calls) step(now time.Duration) {
	if p.stopped {
		return
	}
	if p.closed != nil {
		p.startClosed(now)
	}
	for p.hasNext && p.nextDue <= now {
		k, due := p.nextIdx, p.nextDue
		p.draw()
		if p.cap > 0 && p.inProgress >= p.cap {
			p.tally.Shed++
		} else {
			p.start(k, due, now)
		}
		if !p.hasNext {
			p.endArrivals(now)
		}
	}
	if p.closed == nil && !p.hasNext && !p.arrivalsEnded {
		p.endArrivals(now)
	}
	for {
		c, at, ok := p.turns.popDue(now)
		if !ok {
			break
		}
		p.send(c, at, now)
	}
	if p.arrivalsEnded && now >= p.cutoff && !p.cut && (p.inflight > 0 || p.turns.len() > 0) {
		// The drain is over: the turns not yet sent never are, and those
		// in flight are cut.
		p.cut, p.tally.DrainCut = true, true
		p.dropTurns(now)
		p.cutDue = p.inflight > 0
	}
}

// start starts call k, arrived at due, with its first turn.
func (p *calls) start(k int, due, now time.Duration) {
	p.progress(now)
	p.inProgress++
	p.tally.Started++
	c := &call{src: p.src, script: p.src.Call(k), arrival: due, index: k, turn: 1}
	p.send(c, due, now)
}

// endArrivals notes that the last call has arrived and arms the drain.
func (p *calls) endArrivals(now time.Duration) {
	p.arrivalsEnded, p.arrivalsEnd = true, now
	if p.load.DrainTimeout > 0 {
		p.cutoff = now + p.load.DrainTimeout
	}
}

// send sends call c's current turn, due at due.
func (p *calls) send(c *call, due, now time.Duration) {
	k := c.turn
	warm := k <= c.script.Warmup
	f := p.d.flight(!warm)
	f.call, f.turn, f.KeepText = c, k, true
	r := &f.Rec
	r.Index, r.Tag, r.Scheduled, r.Warmup, r.Origin, r.Call = p.turnIndex, k, due, warm, c.arrival, c.index
	r.Paused, r.Lateness = c.script.PausedBefore(k), max(now-due, 0)
	if c.rounds > 0 {
		// A tool round follows its answer at once: no pause before it.
		r.Paused = 0
	}
	f.paced, f.lateFrom = true, due
	p.turnIndex++
	p.inflight++
	p.d.start(f)
}

// dropTurns ends the calls whose next turn was still to come.
func (p *calls) dropTurns(now time.Duration) {
	if n := p.turns.len(); n > 0 {
		p.progress(now)
		p.inProgress -= n
		p.turns.clear()
	}
}

func (p *calls) next() (time.Duration, bool) {
	if p.stopped {
		return Never, false
	}
	t, precise := Never, false
	if p.hasNext {
		t, precise = p.nextDue, true
	}
	if at := p.turns.next(); at < t {
		t, precise = at, true
	}
	if c := p.closed; c != nil && !p.arrivalsEnded {
		if at := min(c.slots.next(), c.end); at < t {
			t, precise = at, true
		}
	}
	if p.arrivalsEnded && !p.cut && (p.inflight > 0 || p.turns.len() > 0) && p.cutoff < t {
		t, precise = p.cutoff, false
	}
	return t, precise
}

func (p *calls) stop(now time.Duration) {
	if p.stopped {
		return
	}
	p.stopped, p.hasNext = true, false
	p.count.Cut(now)
	if !p.arrivalsEnded {
		p.endArrivals(now)
	}
	p.dropTurns(now)
	if p.inflight > 0 && !p.cut {
		p.cut, p.cutDue = true, true
	}
}

func (p *calls) abort() bool {
	due := p.cutDue
	p.cutDue = false
	return due
}

func (p *calls) finished() bool {
	return p.arrivalsEnded && p.inflight == 0 && p.turns.len() == 0
}

// end ends call c at its turn's record rec, counting how it ended; a
// closed loop's slot takes its next call after the turnaround. It says
// whether the dispatcher must look again.
func (p *calls) end(c *call, rec *record.Record, turn int) bool {
	p.progress(rec.Done)
	p.inProgress--
	switch {
	case rec.Class == "":
		if turn == c.script.Turns() {
			p.tally.Completed++
			p.tally.CallTime += rec.Done - c.arrival
		}
	case rec.Class != record.ClassInterrupted:
		p.tally.Failed++
		if rec.Warmup {
			p.tally.WarmupFailed++
		}
	}
	if p.closed != nil && !p.arrivalsEnded {
		due := rec.Done + p.d.o.Turnaround
		p.closed.slots.add(due, struct{}{})
		return due < p.d.sleeping
	}
	return p.finished()
}

// done ends a turn: the call ends after its last turn or a failed one, as
// a live call does; otherwise its next turn is due after its gap.
func (p *calls) done(f *Flight) bool {
	p.inflight--
	rec, c := &f.Rec, f.call
	if rec.Warmup {
		p.tally.WarmupTurns++
	}
	if p.d.o.ServerHistory {
		c.lastResponse = rec.ResponseID
	}
	if rec.Class == "" && len(rec.ToolCalls) > 0 {
		c.exchange = append(c.exchange, p.d.toolExchange(rec)...)
		if c.rounds < p.d.o.ToolRounds && !p.cut && !p.stopped {
			// The model called a tool: its result goes back at once, in
			// the same turn, for the model to go on.
			c.rounds++
			due := rec.Done + p.d.o.Turnaround
			p.turns.add(due, c)
			return due < p.d.sleeping
		}
	}
	if rec.Class != "" || f.turn == c.script.Turns() || p.cut || p.stopped {
		return p.end(c, rec, f.turn)
	}
	c.answers = append(c.answers, string(rec.Text))
	c.exchanges = append(c.exchanges, c.exchange)
	c.exchange, c.rounds = nil, 0
	// The server now holds the turn's prompt and its answer: a next turn
	// that carries that answer may hit it all.
	p.d.o.Prefixes.Share(workload.WithAnswer(f.Request(), rec.Text))
	c.turn++
	due := rec.Done + c.script.Gaps[c.turn-1] + p.d.o.Turnaround
	p.turns.add(due, c)
	return due < p.d.sleeping
}
