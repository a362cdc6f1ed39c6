package sched

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
)

// Routing is how a router picks a replica for a request: a fleet's
// gateway in front of aggregated replicas, or a disaggregated model's
// choice of a prefill and then a decode replica.
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

// ParseRouting checks a policy name ("" is round robin).
func ParseRouting(s string) (Routing, error) {
	switch r := Routing(s); r {
	case RoundRobin, Random, LeastLoaded, PrefixAffinity, AdapterAffinity:
		return r, nil
	case "":
		return RoundRobin, nil
	}
	return "", fmt.Errorf("routing %q: use round-robin, random, least-loaded, prefix-affinity or adapter-affinity", s)
}

// PrefixKey is what prefix affinity routes by: a hash of the first
// prefixTokens token ids.
func PrefixKey(ids []uint64) uint64 {
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

// Router picks one of n replicas for each request and keeps the load it
// routed to each until the request ends.
type Router struct {
	policy   Routing
	n        int
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

// NewRouter routes over n replicas by policy, drawing from seed.
func NewRouter(policy Routing, n int, seed uint64) *Router {
	return &Router{policy: policy, n: n, rng: rand.New(rand.NewPCG(seed, 0x70a7e)), inflight: make([]int, n),
		outstanding: make([]int, n), replica: map[int64]int{}, work: map[int64]int{}}
}

// ByPrefix reports whether Route reads a request's prefix key.
func (r *Router) ByPrefix() bool { return r.policy == PrefixAffinity && r.n > 1 }

// Route picks a replica for req, whose prompt's opening has the routing
// key (PrefixKey), and books it there.
func (r *Router) Route(req *Request, key uint64) int {
	i := r.pick(req, key)
	r.inflight[i]++
	r.replica[req.ID] = i
	if r.n > 1 {
		w := req.PromptLen
		if req.IDs != nil {
			w = len(req.IDs) - req.OutputLen
		}
		r.work[req.ID] = w
		r.outstanding[i] += w
	}
	return i
}

func (r *Router) pick(req *Request, key uint64) int {
	if r.n == 1 {
		return 0
	}
	switch r.policy {
	case Random:
		return r.rng.IntN(r.n)
	case LeastLoaded:
		return r.leastLoaded()
	case PrefixAffinity:
		return int(key % uint64(r.n))
	case AdapterAffinity:
		if req.Adapter > 0 {
			return (req.Adapter - 1) % r.n
		}
	}
	i := r.next % r.n
	r.next++
	return i
}

// leastLoaded is the replica of the fewest outstanding tokens, then the
// fewest requests, drawn at random among equals.
func (r *Router) leastLoaded() int {
	r.ties = r.ties[:0]
	for i := range r.outstanding {
		if len(r.ties) == 0 {
			r.ties = append(r.ties, i)
			continue
		}
		switch b := r.ties[0]; {
		case r.outstanding[i] < r.outstanding[b] || r.outstanding[i] == r.outstanding[b] && r.inflight[i] < r.inflight[b]:
			r.ties = append(r.ties[:0], i)
		case r.outstanding[i] == r.outstanding[b] && r.inflight[i] == r.inflight[b]:
			r.ties = append(r.ties, i)
		}
	}
	return r.ties[r.rng.IntN(len(r.ties))]
}

// Prefilled records that request id's prompt no longer waits on the
// replica it was routed to.
func (r *Router) Prefilled(id int64) {
	if i, ok := r.replica[id]; ok && r.n > 1 {
		r.outstanding[i] -= r.work[id]
		r.work[id] = 0
	}
}

// Done records that request id ended (or was cut) and says where it ran.
func (r *Router) Done(id int64) (int, bool) {
	i, ok := r.replica[id]
	if ok {
		r.inflight[i]--
		delete(r.replica, id)
		r.outstanding[i] -= r.work[id]
		delete(r.work, id)
	}
	return i, ok
}

// Replica is where request id was routed.
func (r *Router) Replica(id int64) (int, bool) {
	i, ok := r.replica[id]
	return i, ok
}
