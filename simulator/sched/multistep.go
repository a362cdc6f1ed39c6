package sched

// Multi-step scheduling, as vLLM V0's --num-scheduler-steps N ran it
// (vllm/engine/llm_engine.py step, core/scheduler.py, worker/
// multi_step_model_runner.py): the scheduler runs once per window; a
// window that decodes runs N steps on the batch it fixed, each
// sequence's KV reserved for the whole window up front (its N-1
// lookahead slots, preempting as an ordinary step would), and a
// request that arrives meanwhile waits for the window's end. A window
// that computes prompts is one step, as V0 gives prefills no lookahead.
// A sequence that finishes inside a window is freed and answered at
// once, but the window's remaining steps still compute it: the batch
// is fixed (multi_step.py discards the tokens after a stop).

// window is the decode window under way.
type window struct {
	// left is the window's steps still to run after the current one; at
	// is the current step's place in the window, from 0.
	left, at int
	// ghosts are the lengths, in tokens, of the sequences that finished
	// inside the window and are still computed until it ends.
	ghosts []int
}

// steps is the window's length: Config.SchedulerSteps, at least 1.
func (c *Core) steps() int { return max(c.cfg.SchedulerSteps, 1) }

// lookahead is the tokens beyond the next a decoding sequence reserves
// blocks for when a window starts.
func (c *Core) lookahead(s *Seq, skipDecodes bool) int {
	if c.steps() > 1 && !skipDecodes && s.decoding() {
		return c.steps() - 1
	}
	return 0
}

// openWindow starts a decode window after a step that only decoded
// (nothing admitted, no prompt token computed); it marks the step's place.
func (c *Core) openWindow(st *Step) {
	st.WindowEnd = true
	if c.steps() == 1 || st.BatchSize == 0 || st.PrefillTokens > 0 || len(st.Admitted) > 0 {
		return
	}
	c.win = window{left: c.steps() - 1, ghosts: c.win.ghosts[:0]}
	st.WindowEnd = false
}

// inWindow reports whether a decode window has steps left to run.
func (c *Core) inWindow() bool { return c.win.left > 0 }

// windowStep runs the next step of the window under way: every sequence
// of the batch decodes a token into the blocks reserved for it, nothing
// is admitted, and those finished earlier in the window are computed
// too.
func (c *Core) windowStep(now float64) *Step {
	st := c.newStep(now)
	for _, s := range c.running {
		if c.grow(s, s.computed+1, 0) {
			s.scheduledTokens = 1
		}
	}
	c.win.left--
	c.win.at++
	st.WindowStep, st.WindowEnd = c.win.at, c.win.left == 0
	st.StopReason = StopNone
	if c.waiting.len() > 0 {
		st.StopReason = StopWindow
	}
	return c.finishStep(now)
}

// ghostLoad adds the window's finished sequences to a step's load, each
// a token longer than at the last step.
func (c *Core) ghostLoad(load *Load) {
	for i, n := range c.win.ghosts {
		load.Tokens++
		load.Seqs++
		load.KVBytes += c.cfg.Costs.KVBytes(n + 1)
		load.AttnFLOPs += c.cfg.Costs.AttentionFLOPs(n, 1)
		c.win.ghosts[i] = n + 1
	}
}
