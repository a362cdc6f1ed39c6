package sched

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
	// Chain, in place of IDs, is their full blocks' chained hashes under
	// a block of ChainBlock tokens (ChainOf): all the prefix cache reads
	// of them, in a sixteenth of the memory. PromptLen is then set. A
	// chain of another block size than the core's is ignored (no prefix
	// caching for the request).
	Chain      []uint64
	ChainBlock int
	// EncoderFLOPs is the vision encoder's work on the request's images
	// (those not in the encoder cache), done in the first step that
	// schedules it.
	EncoderFLOPs float64
	// Priority orders it under PolicyPriority (lower first); Adapter is
	// its LoRA adapter (0: the base model), which salts its prefix-cache
	// blocks, as vLLM's extra keys do.
	Priority int
	Adapter  int
	// Remote is how many of the prompt's tokens arrive with their KV
	// computed elsewhere (a disaggregated model's prefill replica): its
	// first admission computes only the rest, the last prompt token at
	// least, as vLLM's KV connectors leave it to recompute for its
	// logits. A preemption loses them: the prompt is then recomputed here.
	Remote int
	// Owner is the caller's own, returned on the sequence in every step's
	// emissions: a caller that books each token finds the request it
	// belongs to without a lookup per token.
	Owner any
}

// Seq is a request's state inside the core.
type Seq struct {
	Request
	computed  int
	generated int
	blocks    []int32
	winBlocks []int32
	hashes    []uint64 // hashes of its full computed blocks, in order
	done      bool
	// encoded says its images went through the encoder (kept across a
	// preemption, as vLLM's encoder cache keeps them).
	encoded bool

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
	hasFirstToken   bool
	scheduledTokens int
}

func (s *Seq) total() int { return s.PromptLen + s.generated }

// Emission is one token released at the end of a step.
type Emission struct {
	Seq   *Seq
	Index int // 0-based index of the token in the answer
}

// Step is what one engine step did.
type Step struct {
	Start, End            float64
	Duration              float64
	Compute, Memory, Comm float64
	BatchSize             int
	ScheduledTokens       int
	PrefillTokens         int
	DecodeTokens          int
	Emitted               []Emission
	Finished              []*Seq
	Preempted             []*Seq
	Admitted              []*Seq
	StopReason            string
	Running, Waiting      int
	// WindowStep is the step's place in a multi-step window (0 for its
	// first, and for every step without one); WindowEnd says it ends its
	// window (every step without one does).
	WindowStep               int
	WindowEnd                bool
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
	// StopWindow: a multi-step window is under way (multistep.go).
	StopWindow = "window"
)

// Core is the scheduler: a waiting queue, a running batch and a block pool.
type Core struct {
	cfg     Config
	pool    *blockPool
	waiting seqDeque
	running []*Seq
	byID    map[int64]*Seq
	// abortedWaiting counts aborted sequences still in waiting: they are
	// dropped from it in one pass when it is next read, since removing
	// each on its own costs the queue's length, and a level cut with tens
	// of thousands queued aborts them all at once (a cut prediction took
	// most of a second to stop).
	abortedWaiting int
	step           Step
	// lora is the adapters resident (Config.LoRA's).
	lora loraState
	// jitter varies step times (Config.StepTimeCV); nil for none.
	jitter *jitter
	// win is the multi-step window under way (Config.SchedulerSteps).
	win window
	// newTokenRatio scales the answers' reserve (Config.ReserveDecodes).
	newTokenRatio float64
	// Totals since start.
	Preemptions   int64
	PrefixQueries int64
	PrefixHits    int64
}

// New returns a core for cfg.
func New(cfg Config) *Core {
	return &Core{cfg: cfg, pool: newBlockPool(cfg.NumBlocks), byID: map[int64]*Seq{}, jitter: newJitter(cfg.StepTimeCV, 0, 0),
		newTokenRatio: initNewTokenRatio}
}

// Config returns the core's configuration.
func (c *Core) Config() Config { return c.cfg }

// BlocksFor is how many blocks a sequence of n tokens needs in all.
func (c *Core) BlocksFor(n int) int { return c.cfg.BlocksFor(n) }

// Fits reports whether a request of prompt+output tokens could ever run:
// its blocks fit the cache, and (WholePrompts) its prompt a step.
func (c *Core) Fits(promptLen, outputLen int) bool {
	if c.cfg.WholePrompts && promptLen > c.cfg.MaxNumBatchedTokens {
		return false
	}
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
	if c.cfg.PrefixCaching && s.hashed(c.cfg.BlockSize) {
		s.hashes = make([]uint64, 0, nb)
	}
	c.enqueue(s, false)
	c.byID[r.ID] = s
	return s
}

// enqueue puts s in the waiting queue: at the back (an arrival) or the
// front (a preempted request) under FCFS; in its (priority, arrival)
// place under the priority policy.
func (c *Core) enqueue(s *Seq, preempted bool) {
	switch {
	case c.cfg.Policy == PolicyPriority:
		c.waiting.insertOrdered(s, before)
	case preempted:
		c.waiting.pushFront(s)
	default:
		c.waiting.pushBack(s)
	}
}

// before orders the priority queue: priority, then arrival, then id.
func before(a, b *Seq) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	if a.Arrival != b.Arrival {
		return a.Arrival < b.Arrival
	}
	return a.ID < b.ID
}

// Abort drops a request whose client went away, freeing its blocks.
func (c *Core) Abort(id int64) {
	s := c.byID[id]
	if s == nil || s.done {
		return
	}
	s.done = true
	c.release(s)
	n := len(c.running)
	if c.running = removeSeq(c.running, s); len(c.running) == n {
		c.abortedWaiting++ // it is waiting
	}
	delete(c.byID, id)
}

// dropAborted removes the aborted sequences from waiting, keeping order.
func (c *Core) dropAborted() {
	if c.abortedWaiting > 0 {
		c.waiting.removeDone()
		c.abortedWaiting = 0
	}
}

// Idle reports whether nothing is waiting or running.
func (c *Core) Idle() bool {
	return c.Waiting() == 0 && len(c.running) == 0 && !(c.inWindow() && len(c.win.ghosts) > 0)
}

// Running is the number of sequences in the batch.
func (c *Core) Running() int { return len(c.running) }

// Waiting is the number of sequences queued, preempted ones included.
func (c *Core) Waiting() int {
	c.dropAborted()
	return c.waiting.len()
}

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
	bs := c.cfg.BlockSize
	if !c.cfg.PrefixCaching || !s.hashed(bs) {
		return nil, nil
	}
	maxBlocks := min((s.total()-1)/bs, s.fullBlocks(bs))
	parent := s.root()
	var hit []int32
	hashes := s.hashes[:0]
	for b := 0; b < maxBlocks; b++ {
		h := s.blockHashAt(b, bs, parent)
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
	bs := c.cfg.BlockSize
	if !c.cfg.PrefixCaching || !s.hashed(bs) {
		return
	}
	full := s.computed / bs
	if full > len(s.blocks) {
		full = len(s.blocks)
	}
	for b := len(s.hashes); b < full; b++ {
		if b >= s.fullBlocks(bs) {
			break
		}
		parent := s.root()
		if b > 0 {
			parent = s.hashes[b-1]
		}
		h := s.blockHashAt(b, bs, parent)
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
	s.Preemptions++
	s.hasFirstToken = false
	c.Preemptions++
	c.running = removeSeq(c.running, s)
	c.enqueue(s, true)
	c.step.Preempted = append(c.step.Preempted, s)
}
