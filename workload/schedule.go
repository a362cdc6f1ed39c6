// Package workload decides what knee sends and when: arrival schedules,
// prompts and multi-turn call scenarios. Everything here is a pure function of
// its inputs and a seed; nothing reads the wall clock or touches the network.
package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Arrivals draws the arrival offsets of an open-loop schedule. Offsets are
// absolute (measured from the start of the run), so a dispatcher that sleeps
// toward start+offset never accumulates drift.
type Arrivals struct {
	gamma  distuv.Gamma
	exp    distuv.Exponential
	bursty bool
	next   float64 // seconds
	count  int
	// trace, when set, is the offsets of a recorded schedule, given in
	// order; the process ends after the last.
	trace   []time.Duration
	isTrace bool
	// warp, when set, moves each offset (in seconds): a ramp's rising
	// rate (NewRampArrivals).
	warp func(float64) float64
}

// NewTraceArrivals returns the arrivals of a trace: offsets from its
// start, in order (see TraceSchedule). A phase of it ends with its last.
func NewTraceArrivals(offsets []time.Duration) *Arrivals {
	return &Arrivals{trace: offsets, isTrace: true}
}

// TraceRate is a trace's mean rate: its gaps over the time they span.
func TraceRate(offsets []time.Duration) float64 {
	return OfferedRate(offsets)
}

// NewArrivals returns a seeded arrival process at rate per second. A
// burstiness of 1 gives Poisson arrivals; other values draw gaps from a gamma
// distribution with shape burstiness and the same mean (vLLM's definition),
// so smaller values are burstier and larger ones more regular.
func NewArrivals(rate, burstiness float64, seed uint64) (*Arrivals, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("arrival rate must be a positive finite number, got %v", rate)
	}
	if !(burstiness > 0) || math.IsInf(burstiness, 0) {
		return nil, errors.New("burstiness must be a positive finite number")
	}
	src := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	a := &Arrivals{bursty: burstiness != 1}
	if a.bursty {
		a.gamma = distuv.Gamma{Alpha: burstiness, Beta: rate * burstiness, Src: src}
	} else {
		a.exp = distuv.Exponential{Rate: rate, Src: src}
	}
	return a, nil
}

// Next returns the offset of the next arrival from the start of the run.
// The first arrival is at offset zero, so a run starts with a request rather
// than an idle gap.
func (a *Arrivals) Next() time.Duration {
	if a.isTrace {
		a.count++
		if a.count > len(a.trace) {
			return time.Duration(math.MaxInt64)
		}
		return a.trace[a.count-1]
	}
	at := a.next
	if a.bursty {
		a.next += a.gamma.Rand()
	} else {
		a.next += a.exp.Rand()
	}
	a.count++
	if a.warp != nil {
		at = a.warp(at)
		if at > math.MaxInt64/float64(time.Second) {
			return time.Duration(math.MaxInt64)
		}
	}
	return time.Duration(at * float64(time.Second))
}

// Phase is one phase of an arrival process (a warm-up, a measured window):
// its arrivals' offsets from the phase's own first arrival, at most n of
// them when n > 0, none at or past d when d > 0. Live runs and their
// virtual-time predictions draw their phases through it, so both see the
// same arrivals.
type Phase struct {
	a     *Arrivals
	n     int
	d     time.Duration
	first time.Duration
	count int
}

// Phase starts a phase at the process's next arrival.
func (a *Arrivals) Phase(n int, d time.Duration) *Phase {
	return &Phase{a: a, n: n, d: d, first: -1}
}

// Next returns the next arrival's offset from the phase's first, or false
// once the phase is over. The arrival that falls past d is drawn from the
// process and lost to it, as a dispatcher that drew it would lose it.
func (p *Phase) Next() (time.Duration, bool) {
	if p.n > 0 && p.count >= p.n || p.a.isTrace && p.a.count >= len(p.a.trace) {
		return 0, false
	}
	off := p.a.Next()
	if p.first < 0 {
		p.first = off
	}
	rel := off - p.first
	if p.d > 0 && rel >= p.d {
		return 0, false
	}
	p.count++
	return rel, true
}

// Count is how many arrivals the phase has given.
func (p *Phase) Count() int { return p.count }

// Schedule draws the first n arrival offsets.
func Schedule(rate, burstiness float64, seed uint64, n int) ([]time.Duration, error) {
	a, err := NewArrivals(rate, burstiness, seed)
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = a.Next()
	}
	return out, nil
}

// OfferedRate is the rate the drawn schedule actually offers: the number of
// gaps divided by the time they span. It differs from the target rate by the
// sampling noise of the draw, which is why knee reports both.
func OfferedRate(offsets []time.Duration) float64 {
	if len(offsets) < 2 {
		return 0
	}
	span := (offsets[len(offsets)-1] - offsets[0]).Seconds()
	if span <= 0 {
		return math.Inf(1)
	}
	return float64(len(offsets)-1) / span
}
