package sched

import (
	"fmt"
	"math"
)

// DisaggConfig is a model served disaggregated, as vLLM's KV connectors,
// SGLang's PD mode and llm-d's P/D serve it: a pool of prefill replicas
// computes each prompt (and one token, discarded), the prompt's KV is
// shipped over a link, and a pool of decode replicas emits every token.
type DisaggConfig struct {
	// Prefill and Decode are one replica's core in each pool.
	Prefill, Decode Config
	// PrefillReplicas and DecodeReplicas size the pools.
	PrefillReplicas, DecodeReplicas int
	// LinkGbps is each decode replica's link for the KV it receives, in
	// gigabits a second, shared equally by the transfers into it at once.
	LinkGbps float64
	// Routing picks a replica in each pool; Seed draws its random choices.
	Routing Routing
	Seed    uint64
}

// Validate reports a disaggregated model that cannot run.
func (c DisaggConfig) Validate() error {
	switch {
	case c.PrefillReplicas < 1 || c.DecodeReplicas < 1:
		return fmt.Errorf("prefill_replicas %d, decode_replicas %d: each pool needs a replica or more", c.PrefillReplicas, c.DecodeReplicas)
	case c.PrefillReplicas+c.DecodeReplicas > 4096:
		return fmt.Errorf("prefill_replicas + decode_replicas %d: at most 4096", c.PrefillReplicas+c.DecodeReplicas)
	case !(c.LinkGbps > 0) || math.IsInf(c.LinkGbps, 0):
		return fmt.Errorf("kv_link_gbps %v: the link's speed must be a positive number of Gb/s", c.LinkGbps)
	}
	if err := c.Prefill.Validate(); err != nil {
		return fmt.Errorf("prefill pool: %w", err)
	}
	if err := c.Decode.Validate(); err != nil {
		return fmt.Errorf("decode pool: %w", err)
	}
	return nil
}

// Role names a pool.
type Role int

// The pools of a disaggregated model.
const (
	RolePrefill Role = iota
	RoleDecode
)

// String is the role as vLLM's and llm-d's labels spell it.
func (r Role) String() string { return [...]string{"prefill", "decode"}[r] }

// Phases is one request's way through a disaggregated model, in
// simulated seconds: queued and computed on a prefill replica, its KV
// shipped, queued on a decode replica, and its first token emitted there.
type Phases struct {
	Arrival, PrefillStart, PrefillEnd, TransferEnd, DecodeStart, FirstToken float64
	// TransferBytes is the prompt's KV shipped; CachedTokens the prompt's
	// prefix-cache hit on its prefill replica.
	TransferBytes float64
	CachedTokens  int
	// PrefillReplica and DecodeReplica are where it ran.
	PrefillReplica, DecodeReplica int
}

// The phases' lengths, each from the end of the one before.
func (p Phases) PrefillQueue() float64 { return p.PrefillStart - p.Arrival }
func (p Phases) Prefill() float64      { return p.PrefillEnd - p.PrefillStart }
func (p Phases) Transfer() float64     { return p.TransferEnd - p.PrefillEnd }
func (p Phases) DecodeQueue() float64  { return p.DecodeStart - p.TransferEnd }
func (p Phases) FirstStep() float64    { return p.FirstToken - p.DecodeStart }

// pool is one role's replicas, each a core with its step in flight.
type pool struct {
	cores  []*Core
	steps  []*Step
	router *Router
}

func newPool(cfg Config, n int, routing Routing, seed uint64) pool {
	p := pool{steps: make([]*Step, n), router: NewRouter(routing, n, seed)}
	for i := range n {
		p.cores = append(p.cores, NewReplica(cfg, seed, uint64(i)))
	}
	return p
}

// between is a request that left its prefill replica and has not yet
// reached its decode replica.
type between struct {
	req Request
	key uint64
}

// Disagg is the pure core of a disaggregated model: no goroutines, no
// clock. Its caller adds arrivals, asks for the next event's time and
// advances through events one instant at a time (NextEvent, Advance);
// the steps of decode replicas carry the tokens a client sees.
type Disagg struct {
	cfg    DisaggConfig
	pools  [2]pool
	links  []*link
	phases map[int64]*Phases
	held   map[int64]*between
	// clock is the latest instant a step started or an event ended at:
	// no replica starts a step before it.
	clock float64
	// OnStep, when set, sees every step of either pool as it ends.
	OnStep func(role Role, replica int, st *Step)
}

// NewDisagg returns the core of cfg, which must be valid.
func NewDisagg(cfg DisaggConfig) *Disagg {
	d := &Disagg{cfg: cfg, phases: map[int64]*Phases{}, held: map[int64]*between{}}
	d.pools[RolePrefill] = newPool(cfg.Prefill, cfg.PrefillReplicas, cfg.Routing, cfg.Seed)
	d.pools[RoleDecode] = newPool(cfg.Decode, cfg.DecodeReplicas, cfg.Routing, cfg.Seed^0xdec0de)
	for range cfg.DecodeReplicas {
		d.links = append(d.links, &link{rate: cfg.LinkGbps * 1e9 / 8})
	}
	return d
}

// Config is the model's configuration.
func (d *Disagg) Config() DisaggConfig { return d.cfg }

// Core is replica i of a pool (read-only use: gauges, fits).
func (d *Disagg) Core(role Role, i int) *Core { return d.pools[role].cores[i] }

// Replicas is how many replicas a pool has.
func (d *Disagg) Replicas(role Role) int { return len(d.pools[role].cores) }

// Fits reports whether a request could ever run: its prompt and a token
// on a prefill replica, its prompt and answer on a decode replica.
func (d *Disagg) Fits(prompt, output int) bool {
	return d.pools[RolePrefill].cores[0].Fits(prompt, 1) && d.pools[RoleDecode].cores[0].Fits(prompt, output)
}

// Add routes an arrival to a prefill replica, key its prompt's opening's
// (PrefixKey; read only by prefix affinity). The prefill replica computes
// the prompt and one token, as vLLM's proxy asks it with max_tokens 1.
func (d *Disagg) Add(r Request, key uint64) {
	d.phases[r.ID] = &Phases{Arrival: r.Arrival}
	d.held[r.ID] = &between{req: r, key: key}
	pr := r
	if r.IDs != nil {
		prompt := len(r.IDs) - r.OutputLen
		pr.IDs = r.IDs[:prompt+1]
	}
	pr.OutputLen = 1
	p := &d.pools[RolePrefill]
	i := p.router.Route(&pr, key)
	d.phases[r.ID].PrefillReplica = i
	p.cores[i].Add(pr)
}

// Start begins a step at now on every replica with work and no step in
// flight.
func (d *Disagg) Start(now float64) {
	now = math.Max(now, d.clock)
	d.clock = now
	for r := range d.pools {
		p := &d.pools[r]
		for i, c := range p.cores {
			if p.steps[i] == nil && !c.Idle() {
				p.steps[i] = c.Step(now)
			}
		}
	}
}

// NextEvent is the time of the next step's end or transfer's end
// (+Inf: nothing in flight).
func (d *Disagg) NextEvent() float64 {
	t := math.Inf(1)
	for r := range d.pools {
		for _, s := range d.pools[r].steps {
			if s != nil {
				t = math.Min(t, s.End)
			}
		}
	}
	for _, l := range d.links {
		t = math.Min(t, l.nextDone())
	}
	return t
}

// Advance completes everything due at the next event's time — prefill
// steps (their prompts' transfers begin), transfers (their requests join
// a decode replica's queue) and decode steps (handed to emit, whose
// tokens the clients see) — then starts the replicas left without a
// step then. It returns that time.
func (d *Disagg) Advance(emit func(*Step)) float64 {
	t := d.NextEvent()
	if math.IsInf(t, 1) {
		return t
	}
	d.endSteps(RolePrefill, t, d.prefilled)
	for j, l := range d.links {
		for _, id := range l.done(t) {
			d.arrive(id, j, t)
		}
	}
	d.endSteps(RoleDecode, t, func(st *Step) {
		for _, e := range st.Emitted {
			if e.Index == 0 {
				ph := d.phases[e.Seq.ID]
				ph.DecodeStart, ph.FirstToken = e.Seq.ScheduledAt, st.End
				d.pools[RoleDecode].router.Prefilled(e.Seq.ID)
			}
		}
		emit(st)
	})
	d.Start(t)
	return t
}

// endSteps ends a pool's steps that end at t, in replica order.
func (d *Disagg) endSteps(role Role, t float64, done func(*Step)) {
	p := &d.pools[role]
	for i, s := range p.steps {
		if s == nil || s.End > t {
			continue
		}
		p.steps[i] = nil
		done(s)
		if d.OnStep != nil {
			d.OnStep(role, i, s)
		}
	}
}

// prefilled starts the transfer of each prompt a prefill step finished,
// to the decode replica the router picks.
func (d *Disagg) prefilled(st *Step) {
	for _, q := range st.Finished {
		b := d.held[q.ID]
		d.pools[RolePrefill].router.Done(q.ID)
		if b == nil {
			continue
		}
		ph := d.phases[q.ID]
		ph.PrefillStart, ph.PrefillEnd, ph.CachedTokens = q.ScheduledAt, st.End, q.CachedTokens
		prompt := q.PromptLen
		ph.TransferBytes = d.cfg.Prefill.Costs.KVBytes(prompt)
		dr := b.req
		j := d.pools[RoleDecode].router.Route(&dr, b.key)
		ph.DecodeReplica = j
		d.links[j].start(q.ID, ph.TransferBytes, st.End)
	}
}

// arrive queues a request whose KV reached decode replica j at t.
func (d *Disagg) arrive(id int64, j int, t float64) {
	b := d.held[id]
	delete(d.held, id)
	d.phases[id].TransferEnd = t
	r := b.req
	if r.IDs == nil {
		r.Remote = r.PromptLen
	} else {
		r.Remote = len(r.IDs) - r.OutputLen
	}
	r.Arrival = t
	d.pools[RoleDecode].cores[j].Add(r)
}

// Phases is request id's way so far; Done forgets it once it has ended.
func (d *Disagg) Phases(id int64) (Phases, bool) {
	p, ok := d.phases[id]
	if !ok {
		return Phases{}, false
	}
	return *p, true
}

// Done records that request id ended on its decode replica.
func (d *Disagg) Done(id int64) {
	d.pools[RoleDecode].router.Done(id)
	delete(d.phases, id)
}

// Abort drops request id at now wherever it is: queued or prefilling,
// on the link, or decoding.
func (d *Disagg) Abort(id int64, now float64) {
	if _, ok := d.phases[id]; !ok {
		return
	}
	for r := range d.pools {
		p := &d.pools[r]
		if i, ok := p.router.Done(id); ok {
			p.cores[i].Abort(id)
		}
	}
	for _, l := range d.links {
		l.drop(id, now)
	}
	delete(d.held, id)
	delete(d.phases, id)
}

// Idle reports whether nothing is queued, running, in a step or on a
// link.
func (d *Disagg) Idle() bool {
	for r := range d.pools {
		p := &d.pools[r]
		for i, c := range p.cores {
			// A step in flight may hold what its core already finished.
			if !c.Idle() || p.steps[i] != nil {
				return false
			}
		}
	}
	for _, l := range d.links {
		if len(l.xfers) > 0 {
			return false
		}
	}
	return true
}

// ResetPrefixCache forgets every replica's cached blocks, refused while
// requests hold blocks anywhere or are on a link.
func (d *Disagg) ResetPrefixCache() error {
	if n := d.InTransfer(); n > 0 {
		return fmt.Errorf("%d prompts' KV is on its way to a decode replica", n)
	}
	for r := range d.pools {
		for i, c := range d.pools[r].cores {
			if err := c.ResetPrefixCache(); err != nil {
				return fmt.Errorf("%s replica %d: %w", Role(r), i, err)
			}
		}
	}
	return nil
}

// InTransfer is how many prompts' KV is on the links.
func (d *Disagg) InTransfer() int {
	n := 0
	for _, l := range d.links {
		n += len(l.xfers)
	}
	return n
}
