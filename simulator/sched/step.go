package sched

import (
	"maps"
	"math"
	"slices"
)

// Step plans one engine step starting at simulated time now, computes its
// duration, and completes it: sequences whose prompts are fully computed
// emit one token each at the step's end. It returns nil when idle. The
// returned Step is reused by the next call.
func (c *Core) Step(now float64) *Step {
	if c.Idle() {
		return nil
	}
	if c.inWindow() {
		if len(c.running) > 0 || len(c.win.ghosts) > 0 {
			return c.windowStep(now)
		}
		c.win = window{ghosts: c.win.ghosts[:0]} // every request of it aborted
	}
	st := c.newStep(now)
	budget := c.cfg.MaxNumBatchedTokens
	// Under PrefillFirst (SGLang's default) a step that prefills runs no
	// decode: decodes sit this step out whenever a prompt is to be
	// computed.
	prefillStep := c.cfg.PrefillFirst && c.prefillPending()
	budget = c.scheduleRunning(budget, prefillStep)
	c.admit(now, budget)
	if prefillStep && !c.anyScheduled() && len(st.Preempted) == 0 {
		// Nothing could be prefilled (the cache or the batch is full):
		// the step decodes instead, as SGLang's loop falls back to its
		// running batch.
		c.scheduleRunning(c.cfg.MaxNumBatchedTokens, false)
	}
	return c.finishStep(now)
}

// newStep clears the step record for a step starting at now, keeping its
// slices' room.
func (c *Core) newStep(now float64) *Step {
	st := &c.step
	*st = Step{Start: now, Emitted: st.Emitted[:0], Finished: st.Finished[:0], Preempted: st.Preempted[:0], Admitted: st.Admitted[:0]}
	return st
}

// scheduleRunning lets the running sequences spend the budget, in order:
// a decode token each, or their next prefill chunk (prefill is always
// chunked in V1: num_new_tokens = min(remaining, budget)); with
// skipDecodes, only those still computing their prompts. A sequence that
// needs a block when none is free preempts the newest running sequence
// (scheduler.py: self.running.pop()), possibly itself. It returns the
// budget left.
func (c *Core) scheduleRunning(budget int, skipDecodes bool) int {
	for i := 0; i < len(c.running) && budget > 0; i++ {
		s := c.running[i]
		n := min(c.capped(s.total()-s.computed), budget)
		if c.cfg.ReserveDecodes && !s.decoding() {
			n = c.chunkRoom(s, n)
		}
		if n <= 0 || skipDecodes && s.decoding() {
			s.scheduledTokens = 0
			continue
		}
		self, ahead := false, c.lookahead(s, skipDecodes)
		for !c.grow(s, s.computed+n+ahead, 0) {
			victim := c.victim()
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
	return budget
}

// admit admits waiting sequences first-come-first-served, the preempted
// ones at the front, only when nothing was preempted in this step
// (scheduler.py: "if not preempted_reqs"), while fewer than max_num_seqs
// run, and only if their blocks fit above the watermark (applied, as in
// V1, only once something is scheduled this step). Under PolicyLPM the
// queue is first ordered by cached prefix.
func (c *Core) admit(now float64, budget int) {
	st := &c.step
	st.StopReason = StopNone
	if c.cfg.Policy == PolicyLPM {
		c.orderByPrefix()
	}
	if len(st.Preempted) > 0 {
		if c.waiting.len() > 0 {
			st.StopReason = StopPreempted
		}
		return
	}
	c.admitWaiting(now, budget)
}

// admitWaiting admits waiting requests in order while the batch, the
// token budget and the KV cache allow; a request of an adapter the GPU's
// slots cannot take is passed over.
func (c *Core) admitWaiting(now float64, budget int) {
	st := &c.step
	watermark := int(math.Ceil(c.cfg.Watermark * float64(c.cfg.NumBlocks)))
	// ahead is the running requests' reservations (ReserveOutput), taken
	// once a step and kept as requests are admitted; -1 until needed.
	ahead := -1
	// The adapters the batch holds: a request of another is passed
	// over once they fill the GPU's slots (vLLM: max_loras).
	var inUse map[int]bool
	if c.cfg.LoRA != nil {
		inUse = map[int]bool{}
		for a := range adaptersOf(c.running) {
			inUse[a] = true
		}
	}
	for k := 0; k < c.waiting.len(); {
		if len(c.running) >= c.cfg.MaxNumSeqs {
			st.StopReason = StopBatchFull
			break
		}
		if budget <= 0 {
			st.StopReason = StopBudget
			break
		}
		s := c.waiting.at(k)
		if inUse != nil && s.Adapter > 0 && !inUse[s.Adapter] && len(inUse) >= c.cfg.LoRA.MaxLoRAs {
			k++
			continue
		}
		hit, hashes := c.findPrefix(s)
		from := s.computedAtAdmission(len(hit) * c.cfg.BlockSize)
		n := min(c.capped(s.total()-from), budget)
		if stop := c.admissible(s, hit, from, n, watermark, &ahead); stop != "" {
			st.StopReason = stop
			break
		}
		c.take(s, hit, hashes, from, n)
		switch {
		case ahead >= 0 && c.cfg.ReserveOutput:
			ahead += max(c.BlocksFor(s.PromptLen+s.OutputLen)-len(s.blocks), 0)
		case ahead >= 0 && from+n >= s.total():
			ahead += c.answerReserve(s)
		}
		if k == 0 {
			c.waiting.popFront()
		} else {
			c.waiting.removeAt(k)
		}
		if inUse != nil && s.Adapter > 0 {
			inUse[s.Adapter] = true
		}
		s.ScheduledAt = now
		s.scheduledTokens = n
		budget -= n
		c.running = append(c.running, s)
		st.Admitted = append(st.Admitted, s)
	}
}

// admissible says why s, with hit cached and n tokens to compute after
// from, cannot be admitted now ("" when it can): a whole prompt that does
// not fit the budget left (WholePrompts), or a KV cache short of its
// blocks above the watermark (once something is scheduled) and, under
// ReserveOutput, of its whole answer's beside the running requests'
// reservations (ahead, taken once a step).
func (c *Core) admissible(s *Seq, hit []int32, from, n, watermark int, ahead *int) string {
	if c.cfg.WholePrompts && n < s.total()-from {
		return StopBudget
	}
	reserve, upTo := 0, from+n
	if c.anyScheduled() {
		reserve = watermark
	}
	switch {
	case c.cfg.ReserveOutput:
		if *ahead < 0 {
			*ahead = c.reservedAhead()
		}
		reserve += *ahead
		upTo = s.PromptLen + s.OutputLen
	case c.cfg.ReserveDecodes:
		if *ahead < 0 {
			*ahead = c.decodeReserve()
		}
		reserve += *ahead
		if from+n >= s.total() {
			reserve += c.answerReserve(s)
		}
	}
	if !c.canAdmit(hit, upTo, reserve) {
		return StopKVFull
	}
	return ""
}

// computedAtAdmission is what s has computed when admitted with hit
// tokens of its prefix cached: those, or the prompt whose KV arrived from
// a prefill replica (Request.Remote) short of its last token, on a first
// admission.
func (s *Seq) computedAtAdmission(hit int) int {
	if s.Remote > 0 && s.Preemptions == 0 {
		return max(hit, min(s.Remote, s.PromptLen-1))
	}
	return hit
}

// take gives s the cached blocks of its prefix hit and the blocks for its
// next n tokens after the from it has computed, counting the prefix
// cache's queries and hits.
func (c *Core) take(s *Seq, hit []int32, hashes []uint64, from, n int) {
	st := &c.step
	hitTokens := len(hit) * c.cfg.BlockSize
	for _, b := range hit {
		c.pool.touch(b)
	}
	s.blocks = append(s.blocks[:0], hit...)
	s.hashes = hashes
	s.computed = from
	c.grow(s, from+n, 0)
	if c.cfg.PrefixCaching && s.hashed(c.cfg.BlockSize) {
		c.PrefixQueries += int64(s.total())
		c.PrefixHits += int64(hitTokens)
		st.PrefixQueries += s.total()
		st.PrefixHit += hitTokens
	}
	if !s.cachedSet {
		s.CachedTokens, s.cachedSet = hitTokens, true
	}
}

// finishStep prices the step planned and completes it.
func (c *Core) finishStep(now float64) *Step {
	st := &c.step
	load := c.stepLoad(st)
	if st.WindowStep > 0 {
		load.InWindow = true
		c.ghostLoad(&load)
	} else {
		c.openWindow(st)
	}
	cost := c.cfg.Costs.StepTime(load)
	st.Duration, st.Compute, st.Memory, st.Comm = cost.Duration*c.jitter.scale(), cost.Compute, cost.Memory, cost.Comm
	st.End = now + st.Duration
	c.complete(st)
	c.updateNewTokenRatio(st)
	st.Running, st.Waiting = len(c.running), c.waiting.len()
	st.KVUsage = c.KVUsage()
	if st.WindowEnd {
		c.win = window{ghosts: c.win.ghosts[:0]}
	}
	return st
}

// stepLoad is step 3, the step's load for its cost: roofline over every
// scheduled token, the KV each scheduled sequence reads, its attention
// work, an image's encoding, and the LoRA adapters the batch uses.
func (c *Core) stepLoad(st *Step) Load {
	var load Load
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
		load.KVBytes += c.cfg.Costs.KVBytes(s.computed + n)
		load.AttnFLOPs += c.cfg.Costs.AttentionFLOPs(s.computed, n)
		if !s.encoded {
			s.encoded = true
			load.EncoderFLOPs += s.EncoderFLOPs
		}
	}
	load.Tokens, load.Seqs = st.ScheduledTokens, st.BatchSize
	if l := c.cfg.LoRA; l != nil {
		used := adaptersOf(c.running)
		inUse := map[int]bool{}
		for a := range used {
			inUse[a] = true
		}
		// In adapter order: which adapter an LRU slot gives up must not
		// hang on a map's order.
		for _, a := range slices.Sorted(maps.Keys(used)) {
			tokens := used[a]
			if tokens == 0 {
				continue
			}
			load.LoadSeconds += c.load(a, inUse)
			load.AdapterBytes += l.AdapterBytes
			load.AdapterFLOPs += l.AdapterBytes * float64(tokens) // 2 FLOPs a parameter, 2 bytes a parameter
		}
	}
	return load
}

// complete is step 4: advance computed tokens, cache full blocks, and
// emit a token for every sequence that has caught up with its prompt;
// a finished sequence leaves the running set.
func (c *Core) complete(st *Step) {
	keep := c.running[:0]
	for _, s := range c.running {
		n := s.scheduledTokens
		s.scheduledTokens = 0
		if n > 0 {
			if s.computed < s.PromptLen {
				s.PrefillComputed += min(n, s.PromptLen-s.computed)
			}
			s.computed += n
			c.cacheComputed(s)
			if s.computed >= s.total() && c.emit(st, s) {
				continue
			}
		}
		keep = append(keep, s)
	}
	for i := len(keep); i < len(c.running); i++ {
		c.running[i] = nil
	}
	c.running = keep
}

// emit records s's next token in st and reports whether it was s's last
// (s then released).
func (c *Core) emit(st *Step, s *Seq) bool {
	idx := s.generated
	s.generated++
	if !s.hasFirstToken {
		s.hasFirstToken = true
		s.FirstTokenAt = st.End
	}
	st.Emitted = append(st.Emitted, Emission{Seq: s, Index: idx})
	if s.generated < s.OutputLen {
		return false
	}
	s.done = true
	c.release(s)
	if c.inWindow() {
		c.win.ghosts = append(c.win.ghosts, s.total())
	}
	delete(c.byID, s.ID)
	st.Finished = append(st.Finished, s)
	return true
}

func (c *Core) anyScheduled() bool {
	for _, s := range c.running {
		if s.scheduledTokens > 0 {
			return true
		}
	}
	return false
}

// victim is the running sequence a preemption takes: the newest under
// FCFS (vLLM: self.running.pop()), the one of the highest (priority,
// arrival) under the priority policy.
func (c *Core) victim() *Seq {
	v := c.running[len(c.running)-1]
	if c.cfg.Policy == PolicyPriority {
		for _, s := range c.running {
			if before(v, s) {
				v = s
			}
		}
	}
	return v
}

// capped is a request's new tokens for a step under the long-prefill
// threshold (vLLM: if 0 < threshold < num_new_tokens: num_new_tokens =
// threshold), before the step's budget.
func (c *Core) capped(n int) int {
	if t := c.cfg.LongPrefillThreshold; t > 0 && n > t {
		return t
	}
	return n
}
