package predict

import (
	"math"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
)

// Routing is how a fleet's router picks a replica for a request
// (sched.Routing: the simulator's disaggregated models route by the same
// policies).
type Routing = sched.Routing

// The routing policies.
const (
	RoundRobin      = sched.RoundRobin
	Random          = sched.Random
	LeastLoaded     = sched.LeastLoaded
	PrefixAffinity  = sched.PrefixAffinity
	AdapterAffinity = sched.AdapterAffinity
)

// ParseRouting checks a policy name.
func ParseRouting(s string) (Routing, error) { return sched.ParseRouting(s) }

// prefixKey is what prefix affinity routes by (sched.PrefixKey).
func prefixKey(ids []uint64) uint64 { return sched.PrefixKey(ids) }

// servers is the serving side the driver's clock runs, step by step:
// aggregated replicas (fleet) or a disaggregated model's pools (pdFleet).
type servers interface {
	// add routes and queues a request, key its prompt's opening's.
	add(r sched.Request, key uint64)
	// ended records that request id finished, measured or not; abort
	// cuts it short at now.
	ended(id int64, measured bool)
	abort(id int64, now time.Duration)
	// fits refuses, as the server would, a request that could never run.
	fits(prompt, output int) error
	// blockSize is the KV cache's block, which prefix chains are cut by.
	blockSize() int
	routesByPrefix() bool
	// start begins a step at now wherever there is work and no step in
	// flight; nextEnd is the next event's time (driver.Never: none);
	// finish hands each step whose tokens the client sees, ending by now,
	// to complete.
	start(now time.Duration)
	nextEnd() time.Duration
	finish(now time.Duration, complete func(*sched.Step))
	// phases is the measured requests' time to first token by phase (nil
	// for aggregated replicas, which have no phases).
	phases() *results.Phases
}

// fleet is N independent replicas of one model, each its own scheduler
// core (KV cache, queue, prefix cache), behind a router; each replica's
// step in flight runs until its end time.
type fleet struct {
	cores  []*sched.Core
	steps  []*sched.Step // the step in flight per replica, or nil
	router *sched.Router
}

func newFleet(cfg sched.Config, n int, routing Routing, seed uint64) *fleet {
	f := &fleet{steps: make([]*sched.Step, n), router: sched.NewRouter(routing, n, seed)}
	for i := range n {
		f.cores = append(f.cores, sched.NewReplica(cfg, seed, uint64(i)))
	}
	return f
}

func (f *fleet) add(r sched.Request, key uint64) { f.cores[f.router.Route(&r, key)].Add(r) }

func (f *fleet) ended(id int64, _ bool) { f.router.Done(id) }

func (f *fleet) phases() *results.Phases { return nil }

func (f *fleet) abort(id int64, _ time.Duration) {
	if i, ok := f.router.Done(id); ok {
		f.cores[i].Abort(id)
	}
}

// fits asks the first replica, which answers for all: they are alike.
func (f *fleet) fits(prompt, output int) error {
	return engine.CheckFitsLen(f.cores[0], prompt, output)
}

func (f *fleet) blockSize() int { return f.cores[0].Config().BlockSize }

func (f *fleet) routesByPrefix() bool { return f.router.ByPrefix() }

func (f *fleet) start(now time.Duration) {
	for i, c := range f.cores {
		if f.steps[i] == nil && !c.Idle() {
			f.steps[i] = c.Step(now.Seconds())
		}
	}
}

func (f *fleet) nextEnd() time.Duration {
	t := driver.Never
	for _, s := range f.steps {
		if s != nil {
			t = min(t, at(s.End))
		}
	}
	return t
}

// finish completes the steps that end by now, in replica order, and
// frees their replicas for the next step.
func (f *fleet) finish(now time.Duration, complete func(*sched.Step)) {
	for i, s := range f.steps {
		if s != nil && at(s.End) <= now {
			f.steps[i] = nil
			for _, e := range s.Emitted {
				if e.Index == 0 {
					// Prefilled: its prompt no longer waits.
					f.router.Prefilled(e.Seq.ID)
				}
			}
			complete(s)
		}
	}
}

// at is a simulated time in seconds on the driver's clock, rounded up to
// the nanosecond, so a step that ends at t has ended when the clock
// reads at(t), and a step started then starts no earlier than t.
func at(seconds float64) time.Duration { return time.Duration(math.Ceil(seconds * 1e9)) }
