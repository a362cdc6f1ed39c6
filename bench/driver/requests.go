package driver

import (
	"context"
	"time"

	"github.com/kneebench/knee/workload"
)

// Requests is one level of single requests: a warm-up, then the measured
// window and its drain.
type Requests struct {
	Load   Load
	Source workload.Source
	// StartAt, when set, is the wall instant the measured window starts:
	// shards of one load all start their schedule then, after their own
	// warm-up. A driver that is not ready by then starts late, its
	// arrivals due from StartAt all the same: those already due go out at
	// once, each measured from when it was due. It needs a wall clock.
	StartAt time.Time
	// OnWindowStart, when set, runs after the warm-up, just before the
	// measured window (e.g. to reset the server's summary); OnWindowEnd
	// after the window drained.
	OnWindowStart, OnWindowEnd func(ctx context.Context)
	// OnBase, when set, learns the window's start (the instant its
	// schedule counts from, on the driver's clock) before any of its
	// requests is sent: a summary's time slices are cut from it.
	OnBase func(base time.Duration)
}

// RequestsOutcome is what a level of requests did beyond its records.
type RequestsOutcome struct {
	Window Window
	// Late is how long after StartAt the driver came to it.
	Late time.Duration
}

// requestSchedule is a level's arrival process, which its phases draw in
// turn: arrival k of the one schedule (every shard's) is request k.
type requestSchedule struct {
	arrivals *workload.Arrivals
	// trace, when the level replays one, gives the window's arrivals.
	trace *workload.Arrivals
	// drawn counts the arrivals drawn so far, across phases.
	drawn int
}

// arrival is an open loop's arrival waiting for a slot.
type arrival struct {
	index  int
	due    time.Duration
	waited bool
}

// requests is one phase of a level of requests: the warm-up or the
// measured window, open loop or closed.
type requests struct {
	d        *Driver
	src      workload.Source
	load     Load
	shard    Shard
	measured bool
	// n and span bound the phase (a count of requests, a span of time);
	// base is the run-clock time its schedule starts at, windowEnd
	// base+span (Never without a span).
	n               int
	span            time.Duration
	base, windowEnd time.Duration

	// The open loop: the schedule, the next arrival of this shard, the
	// arrivals waiting for a slot, and the slots' count (-1: no cap).
	open     bool
	sched    *workload.Phase
	count    *ArrivalCount
	schedule *requestSchedule
	nextDue  time.Duration
	nextIdx  int
	hasNext  bool
	waiting  []arrival
	head     int
	slots    int
	releases timeQueue[struct{}]
	lastFree time.Duration
	unsent   int64

	// The closed loop: streams ready for their next request, the requests
	// issued, and the index of the phase's first.
	workers   timeQueue[int]
	issued    int
	indexBase int

	inflight int
	// ended says sending is over; cutoff is when what is still in flight
	// is cut (Never: no cut); cutDue asks the dispatcher to cut it.
	ended, stopped bool
	cutoff         time.Duration
	cutDue, cut    bool
	drainCut       bool
	// handover says a ramp's phase is finished once its sending is over:
	// its requests still running pass to the window (adopt).
	handover bool
}

// newRequests sets up a phase of n requests (or of span) from base.
func (d *Driver) newRequests(lv Requests, s *requestSchedule, n int, span time.Duration, measured bool, base time.Duration, indexBase int) *requests {
	l := lv.Load
	p := &requests{d: d, src: lv.Source, load: l, shard: l.Shard, measured: measured, n: n, span: span, base: base,
		windowEnd: Never, cutoff: Never, slots: -1}
	if span > 0 {
		p.windowEnd = base + span
	}
	if l.Rate > 0 {
		p.open, p.schedule = true, s
		if l.MaxConcurrency > 0 {
			p.slots = l.MaxConcurrency
		}
		a := s.arrivals
		if measured && s.trace != nil {
			// A trace's line k is the window's arrival k, whatever warmed up.
			a, s.drawn = s.trace, 0
		}
		p.sched = a.Phase(n, span)
		p.count = NewArrivalCount(base, span, p.shard, s.drawn)
		p.lastFree = -Never
		p.draw()
		return p
	}
	p.n = p.shard.Share(n)
	if measured {
		p.indexBase = indexBase
	}
	for w := range p.shard.Share(l.Concurrency) {
		p.workers.add(base+time.Duration(w)*d.o.StreamGap, w)
	}
	return p
}

// draw takes the next of this shard's arrivals from the one schedule.
func (p *requests) draw() {
	for {
		rel, ok := p.sched.Next()
		if !ok {
			p.hasNext = false
			return
		}
		k, mine := p.count.Add(rel, 0)
		p.schedule.drawn = k + 1
		if mine {
			p.nextDue, p.nextIdx, p.hasNext = p.base+rel, k, true
			return
		}
	}
}

func (p *requests) step(now time.Duration) {
	if p.stopped {
		return
	}
	for {
		_, at, ok := p.releases.popDue(now)
		if !ok {
			break
		}
		p.slots++
		p.lastFree = max(p.lastFree, at)
	}
	if p.open {
		p.stepOpen(now)
	} else {
		p.stepClosed(now)
	}
	if p.ended && p.inflight > 0 && now >= p.cutoff && !p.cut {
		p.cut, p.cutDue, p.drainCut = true, true, true
	}
}

// An open loop's backlog is bounded: without a cap on requests in flight,
// at most maxStartsPerTurn overdue arrivals are taken a turn (a client
// asked for 1e6/s held 650,000 of them at once, 4 GB, and saw a signal 16 s
// late); with a cap, at most maxWaiting wait for a slot.
const (
	maxStartsPerTurn = 4096
	maxWaiting       = 1 << 20
)

// stepOpen sends the arrivals due by now, as slots allow: an arrival that
// finds every slot busy waits for one, and later arrivals queue behind it;
// the wait is the server's doing, so its lateness is counted from when it
// was due or when the slot it took came free, whichever is later. Arrivals
// still waiting when the window closes, and every later one, are never
// sent: they are counted as unsent.
func (p *requests) stepOpen(now time.Duration) {
	for p.hasNext && p.nextDue <= now {
		queued := len(p.waiting) - p.head
		if p.slots < 0 && queued >= maxStartsPerTurn {
			// A client far behind its schedule takes its overdue arrivals
			// a turn's worth at a time: the rest stay in the schedule, not
			// in memory, and a signal is seen between turns.
			break
		}
		if p.slots >= 0 && queued >= maxWaiting {
			// Behind a million waiting for a slot, an arrival will not be
			// sent in the window: it is unsent now, not held.
			p.unsent++
			p.draw()
			continue
		}
		// An arrival waits for a slot when those queued ahead of it take
		// every free one; without a cap (-1) none ever does, and arrivals
		// found due together were only late (the client woke late): their
		// lateness counts from when they were due.
		waited := p.slots >= 0 && queued >= p.slots
		p.waiting = append(p.waiting, arrival{index: p.nextIdx, due: p.nextDue, waited: waited})
		p.draw()
	}
	if now >= p.windowEnd && p.head < len(p.waiting) && p.slots == 0 {
		p.unsent += int64(len(p.waiting) - p.head)
		for ; p.hasNext; p.draw() {
			p.unsent++
		}
		p.waiting, p.head = p.waiting[:0], 0
	}
	for p.head < len(p.waiting) && p.slots != 0 {
		a := p.waiting[p.head]
		p.head++
		if p.slots > 0 {
			p.slots--
		}
		from := a.due
		if a.waited {
			from = max(a.due, p.lastFree)
		}
		late := now - from
		f := p.d.flight(p.measured)
		f.src, f.Rec.Warmup = p.src, !p.measured
		f.paced, f.lateFrom = true, from
		f.Rec.Index, f.Rec.Scheduled, f.Rec.Lateness, f.Rec.Waited = a.index, a.due, max(late, 0), a.waited
		p.inflight++
		p.d.start(f)
	}
	if p.head == len(p.waiting) {
		p.waiting, p.head = p.waiting[:0], 0
	}
	if !p.ended && !p.hasNext && len(p.waiting) == 0 {
		p.end(now)
	}
}

// stepClosed sends each ready stream's next request while the phase has
// one for it: none past the count, none once the span is up.
func (p *requests) stepClosed(now time.Duration) {
	for {
		w, at, ok := p.workers.popDue(now)
		if !ok {
			break
		}
		if p.ended || p.n > 0 && p.issued >= p.n || p.span > 0 && at-p.base >= p.span {
			continue
		}
		f := p.d.flight(p.measured)
		f.src, f.worker, f.Rec.Warmup = p.src, w, !p.measured
		f.Rec.Index, f.Rec.Scheduled = p.shard.Global(p.indexBase, p.issued), now
		// A stream's next request is due the moment its last ended (or
		// its think time passed): how late it went out is the client's
		// own delay, judged as an open loop's lateness is, so a client
		// too busy to keep its streams going is not read as a slow
		// server.
		f.paced, f.lateFrom = true, at
		p.issued++
		p.inflight++
		p.d.start(f)
	}
	if !p.ended && (p.n > 0 && p.issued >= p.n || now >= p.windowEnd) {
		p.end(now)
	}
}

// end closes sending and arms the drain's cut: DrainTimeout after the
// window's end, or after the last send for a window bounded by a count.
func (p *requests) end(now time.Duration) {
	p.ended = true
	p.workers.clear()
	if p.measured && p.load.DrainTimeout > 0 {
		at := now
		if p.span > 0 {
			at = max(at, p.windowEnd)
		}
		p.cutoff = at + p.load.DrainTimeout
	}
}

func (p *requests) next() (time.Duration, bool) {
	if p.stopped {
		return Never, false
	}
	t, precise := Never, false
	if p.hasNext {
		t, precise = p.nextDue, p.slots != 0 && len(p.waiting) == 0
	}
	later := func(at time.Duration) {
		if at < t {
			t, precise = at, false
		}
	}
	if len(p.waiting) > 0 {
		later(p.releases.next())
		later(p.windowEnd)
	}
	if !p.open && !p.ended {
		later(p.workers.next())
		later(p.windowEnd)
	}
	if p.ended && p.inflight > 0 && !p.cut {
		later(p.cutoff)
	}
	return t, precise
}

func (p *requests) stop(now time.Duration) {
	if p.stopped {
		return
	}
	p.stopped, p.ended = true, true
	if p.open && p.count != nil {
		p.count.Cut(now)
	}
	p.waiting, p.head, p.hasNext = nil, 0, false
	p.workers.clear()
	if p.inflight > 0 && !p.cut {
		p.cut, p.cutDue = true, true
	}
}

func (p *requests) abort() bool {
	due := p.cutDue
	p.cutDue = false
	return due
}

func (p *requests) finished() bool { return p.ended && (p.inflight == 0 || p.handover) }

func (p *requests) done(f *Flight) bool {
	p.inflight--
	at := f.Rec.Done + p.d.o.Turnaround
	wake := false
	if p.slots >= 0 && p.open {
		p.releases.add(at, struct{}{})
		wake = len(p.waiting) > 0 && at < p.d.sleeping
	}
	if f.worker >= 0 && !p.ended {
		p.workers.add(at, f.worker)
		wake = wake || at < p.d.sleeping
	}
	return wake || p.ended && p.inflight == 0
}

// window is the phase's count of arrivals, by the window rules.
func (p *requests) window() Window {
	var w Window
	if p.open {
		w = p.count.Window()
		w.Unsent = p.unsent
	}
	w.DrainCut = p.drainCut
	return w
}
