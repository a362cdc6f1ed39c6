package workload

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Ramp is a rise of the arrival rate into a level, sent before its window
// and not measured (vLLM's bench calls it ramp-up): over Duration the rate
// goes from From to the level's rate, in a straight line or, Exponential,
// by a constant factor per second.
type Ramp struct {
	Duration    time.Duration
	Exponential bool
	// From is the rate at the ramp's start, per second; negative takes the
	// default: 0 for a line, a sixteenth of the level's rate for an
	// exponential (which cannot start from 0).
	From float64
}

// ExponentialFromShare is the share of the level's rate an exponential
// ramp starts from by default: four doublings below it.
const ExponentialFromShare = 1.0 / 16

// StartRate is the ramp's first rate into a level of rate.
func (r Ramp) StartRate(rate float64) float64 {
	switch {
	case r.From >= 0:
		return r.From
	case r.Exponential:
		return rate * ExponentialFromShare
	}
	return 0
}

// Strategy names the ramp's shape: "linear" or "exponential".
func (r Ramp) Strategy() string {
	if r.Exponential {
		return "exponential"
	}
	return "linear"
}

// Validate says what is wrong with r as a ramp into a level of rate.
func (r Ramp) Validate(rate float64) error {
	if r.Duration <= 0 {
		return nil
	}
	from := r.StartRate(rate)
	switch {
	case math.IsNaN(r.From) || math.IsInf(r.From, 0):
		return errors.New("a ramp's start rate must be a finite number")
	case !(rate > 0):
		return errors.New("a ramp rises to an open loop's rate: it needs a rate")
	case r.Exponential && !(from > 0):
		return fmt.Errorf("an exponential ramp cannot start from %v per second: it multiplies its rate", from)
	}
	return nil
}

// Expected is the arrivals the ramp into rate offers on average: the
// integral of its rate over its duration.
func (r Ramp) Expected(rate float64) float64 {
	d, r0 := r.Duration.Seconds(), r.StartRate(rate)
	if !r.Exponential || r0 == rate {
		return d * (r0 + rate) / 2
	}
	return d * (rate - r0) / math.Log(rate/r0)
}

// NewRampArrivals returns the ramp's arrivals into a level of rate: the
// seeded process at the level's rate (with its burstiness), each offset
// moved to where the ramp's cumulative rate reaches what the level's
// would have by then, so the ramp keeps the process's shape while its
// rate rises. Its phase (Arrivals.Phase with the ramp's duration) ends
// with the ramp.
func NewRampArrivals(r Ramp, rate, burstiness float64, seed uint64) (*Arrivals, error) {
	if err := r.Validate(rate); err != nil {
		return nil, err
	}
	a, err := NewArrivals(rate, burstiness, seed)
	if err != nil {
		return nil, err
	}
	a.warp = r.inverse(rate)
	return a, nil
}

// inverse maps an offset of the process at the level's rate (τ s, so
// u = rate·τ arrivals expected) to the instant t at which the ramp's
// cumulative rate Λ(t) reaches u; +Inf past the ramp's reach.
func (r Ramp) inverse(rate float64) func(float64) float64 {
	d, r0 := r.Duration.Seconds(), r.StartRate(rate)
	if r.Exponential && r0 != rate {
		lg := math.Log(rate / r0)
		return func(tau float64) float64 {
			// Λ(t) = r0·d/ln g · (g^(t/d) − 1), g = rate/r0.
			arg := 1 + rate*tau*lg/(r0*d)
			if !(arg > 0) {
				return math.Inf(1)
			}
			return d / lg * math.Log(arg)
		}
	}
	a := (rate - r0) / (2 * d)
	return func(tau float64) float64 {
		// Λ(t) = r0·t + a·t², solved in the form that holds at a = 0 and
		// r0 = 0 alike.
		u := rate * tau
		if u == 0 {
			return 0
		}
		disc := r0*r0 + 4*a*u
		if disc < 0 {
			return math.Inf(1)
		}
		return 2 * u / (r0 + math.Sqrt(disc))
	}
}
