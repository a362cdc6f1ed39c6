package driver

import (
	"errors"
	"time"

	"github.com/kneebench/knee/workload"
)

// Load says how much to send and when.
type Load struct {
	// Concurrency > 0 selects a closed loop of that many workers.
	Concurrency int
	// Rate > 0 selects an open loop with arrivals at Rate per second.
	Rate       float64
	Burstiness float64
	// MaxConcurrency caps requests in flight in open loop; an arrival that
	// finds every slot busy waits, and the wait is measured.
	MaxConcurrency int
	// Requests or Duration bounds the measured window.
	Requests int
	Duration time.Duration
	// Warmup unmeasured requests are sent and finished before the window;
	// a negative value means one per concurrent stream.
	Warmup int
	Seed   uint64
	// DrainTimeout bounds the wait for the window's stragglers once sending
	// has ended; those still running are cut and counted as interrupted.
	// Zero waits for every one.
	DrainTimeout time.Duration
	// Shard, when set, sends only this process's part of the load (see
	// Shard); counts, caps and the warm-up are split alike.
	Shard Shard
	// Trace, when set, is the measured window's arrival schedule (offsets
	// from its start, see workload.TraceSchedule): arrival k is line k of
	// the trace, request k. Rate is then the trace's mean rate, which the
	// warm-up's Poisson arrivals take; without Requests or Duration the
	// window is the whole trace.
	Trace []time.Duration
	// Ramp, when its Duration is set, raises the open loop's rate into
	// the window over that time, unmeasured; the window starts at its end
	// with the ramp's requests still running, as they would be in a
	// steady state.
	Ramp workload.Ramp
}

// DefaultWarmup is the warm-up count used when Load.Warmup is negative:
// one request per concurrent stream.
func (l Load) DefaultWarmup() int {
	if l.Warmup >= 0 {
		return l.Warmup
	}
	if l.Concurrency > 0 {
		return l.Concurrency
	}
	if l.MaxConcurrency > 0 {
		return l.MaxConcurrency
	}
	return 1
}

// Validate reports every problem with l at once.
func (l Load) Validate() error {
	var errs []error
	if (l.Concurrency > 0) == (l.Rate > 0) {
		errs = append(errs, ErrLoadMode)
	}
	if l.Concurrency < 0 || l.Rate < 0 || l.MaxConcurrency < 0 || l.Requests < 0 || l.Duration < 0 || l.DrainTimeout < 0 {
		errs = append(errs, errors.New("counts, rates and durations must not be negative"))
	}
	if l.Rate > 0 && l.Burstiness <= 0 {
		errs = append(errs, errors.New("burstiness must be positive"))
	}
	if l.Requests == 0 && l.Duration == 0 && l.Trace == nil {
		errs = append(errs, ErrUnbounded)
	}
	if err := l.Shard.Validate(); err != nil {
		errs = append(errs, err)
	}
	if l.Ramp.Duration > 0 {
		switch {
		case l.Rate <= 0:
			errs = append(errs, errors.New("a ramp raises an open loop's rate: it needs a rate, not a concurrency"))
		case l.Trace != nil:
			errs = append(errs, errors.New("a trace replays its own arrivals: it takes no ramp"))
		default:
			if err := l.Ramp.Validate(l.Rate); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// PoolSize is the number of connections the load needs.
func (l Load) PoolSize() int {
	switch {
	case l.Concurrency > 0:
		return l.Concurrency
	case l.MaxConcurrency > 0:
		return l.MaxConcurrency
	}
	return 16384
}

// Errors of loads that cannot run, named by the fields at fault. A
// command line maps them to its own flags.
var (
	// ErrLoadMode: a Load needs exactly one of Concurrency (a closed loop)
	// and Rate (an open loop).
	ErrLoadMode = errors.New("a load takes exactly one of Concurrency (closed loop) and Rate (open loop)")
	// ErrUnbounded: a Load's measured window needs Requests, Duration or
	// a Trace to end.
	ErrUnbounded = errors.New("the measured window needs a bound: Requests, Duration or a Trace")
)
