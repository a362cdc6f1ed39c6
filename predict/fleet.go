package predict

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/simulator/sched"
)

// Routing is how a fleet's router picks a replica for a request.
type Routing string

// The routing policies.
const (
	// RoundRobin sends request k to replica k mod N.
	RoundRobin Routing = "round-robin"
	// Random picks a replica uniformly, from a seeded generator.
	Random Routing = "random"
	// LeastLoaded picks the replica holding the fewest tokens of
	// unfinished requests (their prompts and answers, as asked), drawing
	// at random among equals, as a gateway that balances by queued work
	// does. Counting requests instead sends
	// a long prompt and a short one alike; breaking ties by index sends
	// every request of a quiet moment to the first replica.
	LeastLoaded Routing = "least-loaded"
	// PrefixAffinity sends requests whose prompts open with the same
	// tokens (the first prefixTokens) to the same replica, so a shared
	// prefix stays in one replica's cache: all turns of a call go where
	// the call's system prompt is cached. It looks at no load.
	PrefixAffinity Routing = "prefix-affinity"
	// AdapterAffinity sends every request of a LoRA adapter to the same
	// replica (the adapter's number modulo the replicas), so an adapter
	// is loaded in one place and its requests share batches; the base
	// model's requests go round robin.
	AdapterAffinity Routing = "adapter-affinity"
)

// prefixTokens is how much of a prompt prefix affinity hashes: four
// blocks of 16, enough to tell calls (or documents) apart, short enough
// that a shared system prompt decides alone.
const prefixTokens = 64

// ParseRouting checks a policy name.
func ParseRouting(s string) (Routing, error) {
	switch r := Routing(s); r {
	case RoundRobin, Random, LeastLoaded, PrefixAffinity, AdapterAffinity:
		return r, nil
	case "":
		return RoundRobin, nil
	}
	return "", fmt.Errorf("routing %q: use round-robin, random, least-loaded, prefix-affinity or adapter-affinity", s)
}

// fleet is N independent replicas of one model, each its own scheduler
// core (KV cache, queue, prefix cache), behind a router; each replica's
// step in flight runs until its end time.
type fleet struct {
	cores    []*sched.Core
	steps    []*sched.Step // the step in flight per replica, or nil
	routing  Routing
	next     int
	rng      *rand.Rand
	inflight []int
	// outstanding is the tokens (prompt and answer) of the unfinished
	// requests each replica holds.
	outstanding []int
	replica     map[int64]int // request id → replica
	work        map[int64]int // request id → its tokens outstanding
	ties        []int
}

func newFleet(cfg sched.Config, n int, routing Routing, seed uint64) *fleet {
	f := &fleet{routing: routing, rng: rand.New(rand.NewPCG(seed, 0x70a7e)), inflight: make([]int, n), steps: make([]*sched.Step, n),
		outstanding: make([]int, n), replica: map[int64]int{}, work: map[int64]int{}}
	for range n {
		f.cores = append(f.cores, sched.New(cfg))
	}
	return f
}

// pick chooses a replica for r, whose prompt's opening has the routing
// key (prefixKey).
func (f *fleet) pick(r *sched.Request, key uint64) int {
	n := len(f.cores)
	if n == 1 {
		return 0
	}
	switch f.routing {
	case Random:
		return f.rng.IntN(n)
	case LeastLoaded:
		f.ties = f.ties[:0]
		for i := range f.outstanding {
			if len(f.ties) == 0 {
				f.ties = append(f.ties, i)
				continue
			}
			switch b := f.ties[0]; {
			case f.outstanding[i] < f.outstanding[b] || f.outstanding[i] == f.outstanding[b] && f.inflight[i] < f.inflight[b]:
				f.ties = append(f.ties[:0], i)
			case f.outstanding[i] == f.outstanding[b] && f.inflight[i] == f.inflight[b]:
				f.ties = append(f.ties, i)
			}
		}
		return f.ties[f.rng.IntN(len(f.ties))]
	case PrefixAffinity:
		return int(key % uint64(n))
	case AdapterAffinity:
		if r.Adapter > 0 {
			return (r.Adapter - 1) % n
		}
	}
	i := f.next % n
	f.next++
	return i
}

// add routes and queues a request, key its prompt's opening's
// (prefixKey).
func (f *fleet) add(r sched.Request, key uint64) {
	i := f.pick(&r, key)
	f.cores[i].Add(r)
	f.inflight[i]++
	f.replica[r.ID] = i
	if len(f.cores) > 1 {
		w := r.PromptLen
		if r.IDs != nil {
			w = len(r.IDs) - r.OutputLen
		}
		f.work[r.ID] = w
		f.outstanding[i] += w
	}
}

// done records that request id finished (or was cut).
func (f *fleet) done(id int64) {
	if i, ok := f.replica[id]; ok {
		f.inflight[i]--
		delete(f.replica, id)
		f.outstanding[i] -= f.work[id]
		delete(f.work, id)
	}
}

// abort cuts request id short.
func (f *fleet) abort(id int64) {
	if i, ok := f.replica[id]; ok {
		f.cores[i].Abort(id)
		f.done(id)
	}
}

// routesByPrefix reports whether pick reads a request's prefix key.
func (f *fleet) routesByPrefix() bool {
	return f.routing == PrefixAffinity && len(f.cores) > 1
}

// prefixKey is what prefix affinity routes by: a hash of the first
// prefixTokens token ids.
func prefixKey(ids []uint64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, id := range ids[:min(len(ids), prefixTokens)] {
		for k := range b {
			b[k] = byte(id >> (8 * k))
		}
		h.Write(b[:])
	}
	return h.Sum64()
}

// core is the first replica, which answers for all whether a request can
// ever run: they are alike.
func (f *fleet) core() *sched.Core { return f.cores[0] }

// start begins a step at now on every replica that has work and no step
// in flight.
func (f *fleet) start(now time.Duration) {
	for i, c := range f.cores {
		if f.steps[i] == nil && !c.Idle() {
			f.steps[i] = c.Step(now.Seconds())
		}
	}
}

// busy reports whether a step is in flight anywhere.
func (f *fleet) busy() bool {
	for _, s := range f.steps {
		if s != nil {
			return true
		}
	}
	return false
}

// nextEnd is the earliest end of a step in flight, on the driver's clock
// (driver.Never when none).
func (f *fleet) nextEnd() time.Duration {
	t := driver.Never
	for _, s := range f.steps {
		if s != nil {
			t = min(t, at(s.End))
		}
	}
	return t
}

// finish hands each step that ends by now to complete, in replica order,
// and frees its replica for the next step.
func (f *fleet) finish(now time.Duration, complete func(*sched.Step)) {
	for i, s := range f.steps {
		if s != nil && at(s.End) <= now {
			f.steps[i] = nil
			if len(f.cores) > 1 {
				for _, e := range s.Emitted {
					if e.Index == 0 {
						// Prefilled: its prompt no longer waits.
						f.outstanding[i] -= f.work[e.Seq.ID]
						f.work[e.Seq.ID] = 0
					}
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
