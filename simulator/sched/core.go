package sched

import (
	"fmt"
	"math"
)

// Config is everything the policy needs.
type Config struct {
	NumBlocks           int
	BlockSize           int
	MaxNumBatchedTokens int
	MaxNumSeqs          int
	// Watermark is the fraction of blocks kept free when admitting waiting
	// requests: 0 as in vLLM V1 (the default), 0.01 for the older V0
	// behaviour.
	Watermark     float64
	PrefixCaching bool
	Costs         Costs
}

// Validate reports a configuration that cannot run.
func (c Config) Validate() error {
	switch {
	case c.NumBlocks < 1:
		return fmt.Errorf("the KV cache holds no block: the weights leave no memory for it")
	case c.BlockSize < 1:
		return fmt.Errorf("block size must be positive")
	case c.MaxNumBatchedTokens < 1 || c.MaxNumSeqs < 1:
		return fmt.Errorf("max_num_batched_tokens and max_num_seqs must be positive")
	case c.Watermark < 0 || c.Watermark >= 1:
		return fmt.Errorf("watermark must be in [0, 1)")
	}
	return nil
}

// Request is one arrival handed to the core.
type Request struct {
	ID      int64
	Arrival float64 // simulated seconds
	// IDs holds the prompt's token ids followed by the answer's. Only the
	// prompt part and the answer's length drive the schedule; the ids give
	// prefix-cache blocks their identity. It may be nil when prefix caching
	// is off, with PromptLen and OutputLen set instead.
	IDs       []uint64
	PromptLen int
	OutputLen int
}

// Seq is a request's state inside the core.
type Seq struct {
	Request
	computed  int
	generated int
	blocks    []int32
	winBlocks []int32
	hashes    []uint64 // hashes of its full computed blocks, in order
	running   bool
	done      bool
	aborted   bool

	Preemptions int
	// CachedTokens is the prefix-cache hit of the first admission.
	CachedTokens int
	cachedSet    bool
	// PrefillComputed counts prompt tokens actually computed (not hit).
	PrefillComputed int
	// Times in simulated seconds; ScheduledAt and FirstTokenAt are reset by
	// a preemption, as vLLM's interval metrics are.
	ScheduledAt     float64
	FirstTokenAt    float64
	FirstEverToken  float64
	LastTokenAt     float64
	hasFirstToken   bool
	everEmitted     bool
	admittedInStep  bool
	scheduledTokens int
}

// Generated is the number of tokens emitted so far.
func (s *Seq) Generated() int { return s.generated }

func (s *Seq) total() int { return s.PromptLen + s.generated }

// Emission is one token released at the end of a step.
type Emission struct {
	Seq   *Seq
	Index int // 0-based index of the token in the answer
}

// Step is what one engine step did.
type Step struct {
	Start, End               float64
	Duration                 float64
	Compute, Memory          float64
	BatchSize                int
	ScheduledTokens          int
	PrefillTokens            int
	DecodeTokens             int
	Emitted                  []Emission
	Finished                 []*Seq
	Preempted                []*Seq
	Admitted                 []*Seq
	StopReason               string
	Running, Waiting         int
	KVUsage                  float64
	PrefixQueries, PrefixHit int
}

// Admission stop reasons.
const (
	StopNone      = "queue_empty"
	StopBatchFull = "batch_full"
	StopKVFull    = "kv_full"
	StopBudget    = "budget_spent"
	StopPreempted = "preempted"
)

// Core is the scheduler: a waiting queue, a running batch and a block pool.
type Core struct {
	cfg     Config
	pool    *blockPool
	waiting seqDeque
	running []*Seq
	byID    map[int64]*Seq
	step    Step
	// Totals since start.
	Preemptions   int64
	PrefixQueries int64
	PrefixHits    int64
}

// New returns a core for cfg.
func New(cfg Config) *Core {
	return &Core{cfg: cfg, pool: newBlockPool(cfg.NumBlocks), byID: map[int64]*Seq{}}
}

// Config returns the core's configuration.
func (c *Core) Config() Config { return c.cfg }

// BlocksFor is how many blocks a sequence of n tokens needs in all.
func (c *Core) BlocksFor(n int) int {
	bs := c.cfg.BlockSize
	return (n+bs-1)/bs + c.cfg.Costs.windowBlocks(n, bs)
}

// Fits reports whether a request of prompt+output tokens could ever run.
func (c *Core) Fits(promptLen, outputLen int) bool {
	return c.BlocksFor(promptLen+outputLen) <= c.cfg.NumBlocks
}

// Add queues a request. Requests must be added in arrival order.
func (c *Core) Add(r Request) *Seq {
	if r.IDs != nil {
		r.PromptLen = len(r.IDs) - r.OutputLen
	}
	s := &Seq{Request: r}
	nb := (r.PromptLen + r.OutputLen + c.cfg.BlockSize - 1) / c.cfg.BlockSize
	s.blocks = make([]int32, 0, nb)
	if c.cfg.PrefixCaching && r.IDs != nil {
		s.hashes = make([]uint64, 0, nb)
	}
	c.waiting.pushBack(s)
	c.byID[r.ID] = s
	return s
}

// Abort drops a request whose client went away, freeing its blocks.
func (c *Core) Abort(id int64) {
	s := c.byID[id]
	if s == nil || s.done {
		return
	}
	s.aborted, s.done = true, true
	c.release(s)
	c.running = removeSeq(c.running, s)
	c.waiting.remove(s)
	delete(c.byID, id)
}

// Idle reports whether nothing is waiting or running.
func (c *Core) Idle() bool { return c.waiting.len() == 0 && len(c.running) == 0 }

// Running and Waiting are the sizes of the two queues.
func (c *Core) Running() int { return len(c.running) }
func (c *Core) Waiting() int { return c.waiting.len() }

// KVUsage is the share of blocks held by sequences.
func (c *Core) KVUsage() float64 { return float64(c.pool.used()) / float64(c.pool.n) }

// UsedBlocks is the number of blocks held by sequences.
func (c *Core) UsedBlocks() int { return c.pool.used() }

func removeSeq(l []*Seq, s *Seq) []*Seq {
	for i, x := range l {
		if x == s {
			return append(l[:i], l[i+1:]...)
		}
	}
	return l
}

// release frees a sequence's blocks, caching its full computed blocks first.
func (c *Core) release(s *Seq) {
	c.pool.free(s.winBlocks)
	c.pool.free(s.blocks)
	s.blocks, s.winBlocks = s.blocks[:0], s.winBlocks[:0]
	s.hashes = s.hashes[:0]
}

// grow makes sure s holds blocks for n tokens; it reports false when the
// pool cannot supply them. reserve blocks must stay free afterwards.
func (c *Core) grow(s *Seq, n, reserve int) bool {
	bs := c.cfg.BlockSize
	need := (n+bs-1)/bs - len(s.blocks)
	needWin := c.cfg.Costs.windowBlocks(n, bs) - len(s.winBlocks)
	if need < 0 {
		need = 0
	}
	if needWin < 0 {
		needWin = 0
	}
	if need+needWin == 0 {
		return true
	}
	if c.pool.numFree-(need+needWin) < reserve {
		return false
	}
	s.blocks = c.pool.allocate(s.blocks, need)
	s.winBlocks = c.pool.allocate(s.winBlocks, needWin)
	return true
}

// findPrefix returns the blocks of the longest cached prefix of s, capped
// at one token short of its length and aligned to blocks (vLLM: the last
// token is always recomputed), and their hashes. It takes no references.
func (c *Core) findPrefix(s *Seq) ([]int32, []uint64) {
	if !c.cfg.PrefixCaching || s.IDs == nil {
		return nil, nil
	}
	bs := c.cfg.BlockSize
	maxBlocks := (s.total() - 1) / bs
	parent := uint64(0)
	var hit []int32
	hashes := s.hashes[:0]
	for b := 0; b < maxBlocks; b++ {
		h := blockHash(parent, s.IDs[b*bs:(b+1)*bs])
		blk, ok := c.pool.lookup(h)
		if !ok {
			break
		}
		hit = append(hit, blk)
		hashes = append(hashes, h)
		parent = h
	}
	return hit, hashes
}

// canAdmit reports whether s, holding the prefix blocks hit, can get blocks
// for n tokens and leave reserve blocks free. Hit blocks that sit unused in
// the free queue count against the free blocks, since touching them takes
// them out of it (kv_cache_manager.py: num_evictable_computed_blocks).
func (c *Core) canAdmit(hit []int32, n, reserve int) bool {
	bs := c.cfg.BlockSize
	need := (n+bs-1)/bs - len(hit) + c.cfg.Costs.windowBlocks(n, bs)
	evictable := 0
	for _, b := range hit {
		if c.pool.ref[b] == 0 {
			evictable++
		}
	}
	return c.pool.numFree-evictable-need >= reserve
}

// cacheComputed registers s's newly full and computed blocks.
func (c *Core) cacheComputed(s *Seq) {
	if !c.cfg.PrefixCaching || s.IDs == nil {
		return
	}
	bs := c.cfg.BlockSize
	full := s.computed / bs
	if full > len(s.blocks) {
		full = len(s.blocks)
	}
	for b := len(s.hashes); b < full; b++ {
		if (b+1)*bs > len(s.IDs) {
			break
		}
		parent := uint64(0)
		if b > 0 {
			parent = s.hashes[b-1]
		}
		h := blockHash(parent, s.IDs[b*bs:(b+1)*bs])
		s.hashes = append(s.hashes, h)
		c.pool.register(s.blocks[b], h)
	}
}

// preempt frees a running sequence and puts it at the front of the queue
// to recompute everything it had (vLLM V1 preempts by recompute only).
func (c *Core) preempt(s *Seq) {
	c.cacheComputed(s)
	c.release(s)
	s.computed = 0
	s.scheduledTokens = 0
	s.running = false
	s.Preemptions++
	s.hasFirstToken = false
	c.Preemptions++
	c.running = removeSeq(c.running, s)
	c.waiting.pushFront(s)
	c.step.Preempted = append(c.step.Preempted, s)
}

// Step plans one engine step starting at simulated time now, computes its
// duration, and completes it: sequences whose prompts are fully computed
// emit one token each at the step's end. It returns nil when idle. The
// returned Step is reused by the next call.
func (c *Core) Step(now float64) *Step {
	if c.Idle() {
		return nil
	}
	st := &c.step
	emitted, finished := st.Emitted[:0], st.Finished[:0]
	*st = Step{Start: now, Emitted: emitted, Finished: finished, Preempted: st.Preempted[:0], Admitted: st.Admitted[:0]}
	budget := c.cfg.MaxNumBatchedTokens

	// 1. Running sequences spend the budget first, in order: a decode
	// token each, or their next prefill chunk (prefill is always chunked in
	// V1: num_new_tokens = min(remaining, budget)). A sequence that needs a
	// block when none is free preempts the newest running sequence
	// (scheduler.py: self.running.pop()), possibly itself.
	for i := 0; i < len(c.running) && budget > 0; i++ {
		s := c.running[i]
		n := min(s.total()-s.computed, budget)
		if n <= 0 {
			s.scheduledTokens = 0
			continue
		}
		self := false
		for !c.grow(s, s.computed+n, 0) {
			victim := c.running[len(c.running)-1]
			if victim.scheduledTokens > 0 && victim != s {
				budget += victim.scheduledTokens
				victim.scheduledTokens = 0
			}
			c.preempt(victim)
			if victim == s {
				self = true
				break
			}
		}
		if self {
			i--
			continue
		}
		s.scheduledTokens = n
		budget -= n
	}

	// 2. Waiting sequences are admitted first-come-first-served, the
	// preempted ones at the front, only when nothing was preempted in this
	// step (scheduler.py: "if not preempted_reqs"), while fewer than
	// max_num_seqs run, and only if their blocks fit above the watermark
	// (applied, as in V1, only once something is scheduled this step).
	st.StopReason = StopNone
	switch {
	case len(st.Preempted) > 0:
		if c.waiting.len() > 0 {
			st.StopReason = StopPreempted
		}
	default:
		watermark := int(math.Ceil(c.cfg.Watermark * float64(c.cfg.NumBlocks)))
		for c.waiting.len() > 0 {
			if len(c.running) >= c.cfg.MaxNumSeqs {
				st.StopReason = StopBatchFull
				break
			}
			if budget <= 0 {
				st.StopReason = StopBudget
				break
			}
			s := c.waiting.front()
			hit, hashes := c.findPrefix(s)
			hitTokens := len(hit) * c.cfg.BlockSize
			n := min(s.total()-hitTokens, budget)
			reserve := 0
			if c.anyScheduled() {
				reserve = watermark
			}
			if !c.canAdmit(hit, hitTokens+n, reserve) {
				st.StopReason = StopKVFull
				break
			}
			for _, b := range hit {
				c.pool.touch(b)
			}
			s.blocks = append(s.blocks[:0], hit...)
			s.hashes = hashes
			s.computed = hitTokens
			c.grow(s, hitTokens+n, 0)
			if c.cfg.PrefixCaching && s.IDs != nil {
				c.PrefixQueries += int64(s.total())
				c.PrefixHits += int64(hitTokens)
				st.PrefixQueries += s.total()
				st.PrefixHit += hitTokens
			}
			if !s.cachedSet {
				s.CachedTokens, s.cachedSet = hitTokens, true
			}
			c.waiting.popFront()
			s.running = true
			s.admittedInStep = true
			s.ScheduledAt = now
			s.scheduledTokens = n
			budget -= n
			c.running = append(c.running, s)
			st.Admitted = append(st.Admitted, s)
		}
	}

	// 3. Cost of the step: roofline over every scheduled token and the KV
	// each scheduled sequence reads.
	kv := 0.0
	for _, s := range c.running {
		n := s.scheduledTokens
		if n == 0 {
			continue
		}
		st.BatchSize++
		st.ScheduledTokens += n
		if s.computed+n <= s.PromptLen {
			st.PrefillTokens += n
		} else if s.computed >= s.PromptLen {
			st.DecodeTokens += n
		} else {
			st.PrefillTokens += s.PromptLen - s.computed
			st.DecodeTokens += s.computed + n - s.PromptLen
		}
		kv += c.cfg.Costs.KVBytes(s.computed + n)
	}
	st.Duration, st.Compute, st.Memory = c.cfg.Costs.StepTime(st.ScheduledTokens, kv)
	st.End = now + st.Duration

	// 4. Complete: advance computed tokens, cache full blocks, and emit a
	// token for every sequence that has caught up with its prompt.
	keep := c.running[:0]
	for _, s := range c.running {
		n := s.scheduledTokens
		s.scheduledTokens = 0
		s.admittedInStep = false
		if n > 0 {
			if s.computed < s.PromptLen {
				s.PrefillComputed += min(n, s.PromptLen-s.computed)
			}
			s.computed += n
			c.cacheComputed(s)
			if s.computed >= s.total() {
				idx := s.generated
				s.generated++
				if !s.hasFirstToken {
					s.hasFirstToken = true
					s.FirstTokenAt = st.End
				}
				if !s.everEmitted {
					s.everEmitted = true
					s.FirstEverToken = st.End
				}
				s.LastTokenAt = st.End
				st.Emitted = append(st.Emitted, Emission{Seq: s, Index: idx})
				if s.generated >= s.OutputLen {
					s.done = true
					s.running = false
					c.release(s)
					delete(c.byID, s.ID)
					st.Finished = append(st.Finished, s)
					continue
				}
			}
		}
		keep = append(keep, s)
	}
	for i := len(keep); i < len(c.running); i++ {
		c.running[i] = nil
	}
	c.running = keep
	st.Running, st.Waiting = len(c.running), c.waiting.len()
	st.KVUsage = c.KVUsage()
	return st
}

func (c *Core) anyScheduled() bool {
	for _, s := range c.running {
		if s.scheduledTokens > 0 {
			return true
		}
	}
	return false
}
