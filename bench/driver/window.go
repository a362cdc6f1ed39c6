package driver

import "time"

// Arrivals drawn for a measured window, counted by the rules that every
// loop shares, live or virtual, requests or calls: the one schedule is
// every shard's, the arrivals are this shard's, and a window bounded by a
// count ends at its last arrival, which the half-open window
// [SchedStart, SchedEnd) therefore leaves out. Only this file says so.

// ArrivalCount counts a window's arrivals as a loop draws them from its
// schedule, in order. The zero value is not ready; use NewArrivalCount.
type ArrivalCount struct {
	base, span time.Duration
	shard      Shard
	first      int
	drawn      int
	mine       int64
	last       time.Duration
	lastMine   bool
	// weight sums what each of this shard's arrivals carries (a call's
	// measured turns); lastWeight is the last arrival's, when it is ours.
	weight, lastWeight int64
}

// NewArrivalCount starts counting a window whose schedule starts at base
// on the run's clock and spans span (zero: the window is bounded by a
// count of arrivals instead), for shard; first is the index in the run's
// schedule of the window's first arrival (the warm-up's come before).
func NewArrivalCount(base, span time.Duration, shard Shard, first int) *ArrivalCount {
	return &ArrivalCount{base: base, span: span, shard: shard, first: first}
}

// Add counts the next arrival of the one schedule, rel after its start,
// carrying weight. It returns the arrival's index in the run's schedule
// and whether it is this shard's to send.
func (a *ArrivalCount) Add(rel time.Duration, weight int64) (index int, mine bool) {
	index = a.first + a.drawn
	a.drawn++
	a.last = rel
	a.lastMine = a.shard.Mine(index)
	a.lastWeight = 0
	if a.lastMine {
		a.mine++
		a.weight += weight
		a.lastWeight = weight
	}
	return index, a.lastMine
}

// Cut ends a window bounded by a span at now, when a signal stopped the
// schedule early: its offered rate is then its arrivals over the time it
// ran, not over the span it never reached (an interrupted level read
// "-60%" against its asked rate).
func (a *ArrivalCount) Cut(now time.Duration) {
	if ran := now - a.base; a.span > 0 && ran > 0 && ran < a.span {
		a.span = ran
	}
}

// Drawn is how many arrivals of the one schedule were counted, every
// shard's.
func (a *ArrivalCount) Drawn() int { return a.drawn }

// Last is the last arrival's offset from the schedule's start.
func (a *ArrivalCount) Last() time.Duration { return a.last }

// Window is the count as the summary takes it: this shard's arrivals, those
// inside the window, the schedule's bounds on the run's clock, and the
// offered rate of the one schedule (over a span, its arrivals per second
// of it; over a count, the gaps per second between the first and last).
func (a *ArrivalCount) Window() Window {
	w := Window{Arrivals: a.mine, InWindow: a.mine, SchedStart: a.base, SchedEnd: a.base + a.last}
	if a.span > 0 {
		w.SchedEnd = a.base + a.span
	} else if a.lastMine && a.mine > 0 {
		w.InWindow--
	}
	switch {
	case a.span > 0:
		w.Offered = float64(a.drawn) / a.span.Seconds()
	case a.drawn >= 2 && a.last > 0:
		w.Offered = float64(a.drawn-1) / a.last.Seconds()
	}
	return w
}

// Weights are the summed weights of this shard's arrivals, all of them and
// those inside the window (see Window).
func (a *ArrivalCount) Weights() (offered, inWindow int64) {
	inWindow = a.weight
	if a.span == 0 && a.lastMine {
		inWindow -= a.lastWeight
	}
	return a.weight, inWindow
}

// Window is what a level of requests did beyond its records, as the
// summary needs it: the measured window's bounds on the run's clock, and
// for an open loop the schedule it offered and what of it went unsent.
type Window struct {
	Start, End time.Duration
	// Offered is the rate of the arrivals drawn for the window; Arrivals
	// counts them (this shard's), SchedStart and SchedEnd bound their
	// schedule, and InWindow counts those due inside [SchedStart, SchedEnd):
	// all of them, but for a window bounded by a count, which ends at its
	// last arrival.
	Offered                    float64
	Arrivals, InWindow, Unsent int64
	SchedStart, SchedEnd       time.Duration
	Warmup                     int
	// RampSent counts the ramp's requests (Load.Ramp), all unmeasured,
	// and RampRunning those still running when the window started.
	RampSent, RampRunning int64
	// DrainCut says the drain timeout cut the window's stragglers.
	DrainCut bool
}
