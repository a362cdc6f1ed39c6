package sched

import "slices"

// PolicyLPM orders the waiting queue by longest cached prefix first
// (SGLang's --schedule-policy lpm), in arrival order among equals; past
// lpmQueueLimit waiting requests it falls back to arrival order, as
// SGLang's does to bound the cost of matching every request each step.
const PolicyLPM = "lpm"

// lpmQueueLimit is the queue length past which PolicyLPM orders by
// arrival (SGLang: a waiting queue longer than 128 is served FCFS).
const lpmQueueLimit = 128

// decoding says the sequence has its prompt (and any answer recomputed
// after a preemption) computed and only produces tokens now.
func (s *Seq) decoding() bool { return s.total()-s.computed <= 1 }

// prefillPending says some prompt is to be computed this step: a running
// sequence's remaining chunks, or a waiting request with a batch slot
// free.
func (c *Core) prefillPending() bool {
	for _, s := range c.running {
		if !s.decoding() {
			return true
		}
	}
	return c.waiting.len() > 0 && len(c.running) < c.cfg.MaxNumSeqs
}

// orderByPrefix sorts the waiting queue by each request's cached prefix,
// longest first, keeping arrival order among equals (Python's sort, which
// SGLang's uses, is stable).
func (c *Core) orderByPrefix() {
	n := c.waiting.len()
	if n < 2 || n > lpmQueueLimit {
		return
	}
	type ranked struct {
		s   *Seq
		hit int
	}
	q := make([]ranked, n)
	for i := range q {
		s := c.waiting.at(i)
		q[i] = ranked{s, c.cachedBlocks(s)}
	}
	slices.SortStableFunc(q, func(a, b ranked) int { return b.hit - a.hit })
	for i, r := range q {
		c.waiting.set(i, r.s)
	}
}

// cachedBlocks is how many of s's leading blocks the prefix cache holds,
// as findPrefix would hit them, without keeping their hashes.
func (c *Core) cachedBlocks(s *Seq) int {
	bs := c.cfg.BlockSize
	if !c.cfg.PrefixCaching || !s.hashed(bs) {
		return 0
	}
	maxBlocks := min((s.total()-1)/bs, s.fullBlocks(bs))
	parent := s.root()
	for b := 0; b < maxBlocks; b++ {
		h := s.blockHashAt(b, bs, parent)
		if _, ok := c.pool.lookup(h); !ok {
			return b
		}
		parent = h
	}
	return maxBlocks
}
