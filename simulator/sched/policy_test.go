package sched

import "testing"

// Each test below pins one scheduling rule on a small hand-built core.

func TestRunningSpendBudgetFirstInOrder(t *testing.T) {
	c := New(baseConfig(1000, 100, 8))
	c.Add(plain(1, 0, 80, 5))
	c.Add(plain(2, 0, 80, 5))
	st := c.Step(0)
	// Request 1 takes 80 of the 100-token budget, request 2 the other 20.
	if st.ScheduledTokens != 100 || st.PrefillTokens != 100 || len(st.Admitted) != 2 {
		t.Fatalf("step 1: scheduled %d prefill %d admitted %d, want 100/100/2", st.ScheduledTokens, st.PrefillTokens, len(st.Admitted))
	}
	if len(st.Emitted) != 1 || st.Emitted[0].Seq.ID != 1 {
		t.Fatalf("step 1 emitted %d tokens, want one from request 1", len(st.Emitted))
	}
	st = c.Step(st.End)
	// Running first: 1 decodes one token, 2 finishes its remaining 60.
	if st.DecodeTokens != 1 || st.PrefillTokens != 60 || len(st.Emitted) != 2 {
		t.Errorf("step 2: decode %d prefill %d emitted %d, want 1/60/2", st.DecodeTokens, st.PrefillTokens, len(st.Emitted))
	}
}

func TestAdmissionIsFCFSAndCapped(t *testing.T) {
	c := New(baseConfig(1000, 10000, 2))
	for i := int64(1); i <= 3; i++ {
		c.Add(plain(i, 0, 10, 3))
	}
	st := c.Step(0)
	if len(st.Admitted) != 2 || st.Admitted[0].ID != 1 || st.Admitted[1].ID != 2 || st.StopReason != StopBatchFull {
		t.Errorf("admitted %d (stop %s), want requests 1 and 2, then batch_full", len(st.Admitted), st.StopReason)
	}
}

func TestBudgetSpentStopsAdmission(t *testing.T) {
	c := New(baseConfig(1000, 50, 8))
	c.Add(plain(1, 0, 50, 3))
	c.Add(plain(2, 0, 50, 3))
	if st := c.Step(0); len(st.Admitted) != 1 || st.StopReason != StopBudget {
		t.Errorf("admitted %d, stop %q; want 1 and budget_spent", len(st.Admitted), st.StopReason)
	}
}

// TestPreemptsNewestAndBlocksAdmission: two running sequences fill a
// 4-block cache; when the older needs a fifth block, the newest running one
// is preempted, put at the front of the queue, and nothing is admitted in
// that step.
func TestPreemptsNewestAndBlocksAdmission(t *testing.T) {
	c := New(baseConfig(4, 1000, 8))
	c.Add(plain(1, 0, 32, 20)) // 2 blocks for its prompt, a third at token 33
	c.Add(plain(2, 0, 32, 20))
	st := c.Step(0)
	if len(st.Admitted) != 2 {
		t.Fatalf("admitted %d, want 2", len(st.Admitted))
	}
	c.Add(plain(3, 0, 8, 2))
	st = c.Step(st.End) // request 1 needs block 5 for its 33rd token
	if len(st.Preempted) != 1 || st.Preempted[0].ID != 2 {
		t.Fatalf("preempted %v, want request 2 (the newest)", ids(st.Preempted))
	}
	if len(st.Admitted) != 0 || st.StopReason != StopPreempted {
		t.Errorf("admitted %v after a preemption (stop %q), want none", ids(st.Admitted), st.StopReason)
	}
	if c.waiting.front().ID != 2 || c.waiting.front().computed != 0 {
		t.Errorf("queue head is %d (computed %d), want the preempted request 2 reset to 0", c.waiting.front().ID, c.waiting.front().computed)
	}
}

func TestWatermarkHoldsBackAdmission(t *testing.T) {
	for _, tc := range []struct {
		watermark float64
		admitted  int
	}{{0, 2}, {0.25, 1}} {
		cfg := baseConfig(8, 1000, 8)
		cfg.Watermark = tc.watermark
		c := New(cfg)
		c.Add(plain(1, 0, 48, 2)) // 3 blocks
		c.Add(plain(2, 0, 64, 2)) // 4 blocks: leaves 1 free, under a 2-block watermark
		if st := c.Step(0); len(st.Admitted) != tc.admitted {
			t.Errorf("watermark %v: admitted %d, want %d", tc.watermark, len(st.Admitted), tc.admitted)
		}
	}
}

func TestAbortFreesBlocks(t *testing.T) {
	c := New(baseConfig(100, 1000, 8))
	c.Add(withIDs(1, 0, uniquePrompt(1, 100), 50))
	c.Add(withIDs(2, 0, uniquePrompt(2, 100), 50))
	c.Step(0)
	if c.UsedBlocks() == 0 {
		t.Fatal("no blocks in use after admission")
	}
	c.Abort(1)
	c.Abort(2)
	if c.UsedBlocks() != 0 || !c.Idle() {
		t.Errorf("after aborting every request: %d blocks used, idle=%v", c.UsedBlocks(), c.Idle())
	}
}

// TestAbortedWaitingLeaveTheQueueInOrder: requests aborted while they
// wait are gone from the queue (its count, and admission, which takes the
// rest first come first served), however many are aborted at once.
func TestAbortedWaitingLeaveTheQueueInOrder(t *testing.T) {
	c := New(baseConfig(1000, 10000, 2))
	for i := int64(1); i <= 8; i++ {
		c.Add(plain(i, 0, 10, 3))
	}
	c.Step(0) // 1 and 2 run; 3–8 wait
	for _, id := range []int64{3, 5, 6, 8} {
		c.Abort(id)
	}
	if c.Waiting() != 2 || c.Running() != 2 {
		t.Fatalf("waiting %d running %d after aborting four of the six waiting, want 2 and 2", c.Waiting(), c.Running())
	}
	c.Abort(1)
	c.Abort(2)
	st := c.Step(1)
	if got := ids(st.Admitted); len(got) != 2 || got[0] != 4 || got[1] != 7 {
		t.Errorf("admitted %v, want [4 7]", got)
	}
	c.Abort(4)
	c.Abort(7)
	if !c.Idle() {
		t.Errorf("not idle after every request was aborted: waiting %d running %d", c.Waiting(), c.Running())
	}
}

// BenchmarkAbortQueue aborts every request of a long waiting queue, as a
// cut level does; each abort costs the same whatever the queue's length.
func BenchmarkAbortQueue(b *testing.B) {
	for range b.N {
		b.StopTimer()
		c := New(baseConfig(100000, 10000, 2))
		for i := int64(1); i <= 50000; i++ {
			c.Add(plain(i, 0, 10, 3))
		}
		b.StartTimer()
		for i := int64(1); i <= 50000; i++ {
			c.Abort(i)
		}
		if !c.Idle() {
			b.Fatal("not idle")
		}
	}
}

func ids(l []*Seq) []int64 {
	var out []int64
	for _, s := range l {
		out = append(out, s.ID)
	}
	return out
}

// TestLongPrefillThreshold: a 1,000-token prompt running with a 100-token
// budget takes it all; with a 30-token threshold (vLLM's
// --long-prefill-token-threshold) it takes 30 a step and a short request
// arriving behind it is admitted in the next step, not after the prompt.
func TestLongPrefillThreshold(t *testing.T) {
	for _, tc := range []struct {
		threshold, longTokens, admittedAt int
	}{{0, 100, 10}, {30, 30, 1}} {
		cfg := baseConfig(1000, 100, 8)
		cfg.LongPrefillThreshold = tc.threshold
		c := New(cfg)
		c.Add(plain(1, 0, 1000, 5))
		st := c.Step(0)
		if st.PrefillTokens != tc.longTokens {
			t.Errorf("threshold %d: the long prompt took %d tokens of the first step, want %d", tc.threshold, st.PrefillTokens, tc.longTokens)
		}
		c.Add(plain(2, st.End, 10, 2))
		for k := 1; ; k++ {
			st = c.Step(st.End)
			if len(st.Admitted) > 0 {
				if k != tc.admittedAt || st.Admitted[0].ID != 2 {
					t.Errorf("threshold %d: the short request was admitted at step %d after it came, want %d", tc.threshold, k, tc.admittedAt)
				}
				break
			}
			if k > 20 {
				t.Fatalf("threshold %d: the short request was never admitted", tc.threshold)
			}
		}
	}
	bad := baseConfig(1000, 100, 8)
	bad.LongPrefillThreshold = -1
	if err := bad.Validate(); err == nil {
		t.Error("a negative threshold was accepted")
	}
}

// TestChainServesAsIDs: requests given as their blocks' chained hashes
// (Request.Chain, what a plan's memo keeps) schedule exactly as the same
// requests given as token ids: every step's tokens, hits, duration and
// emissions, through shared prefixes, adapters, evictions and
// preemptions in a small cache; a chain of another block size is ignored.
func TestChainServesAsIDs(t *testing.T) {
	shared := make([]uint64, 100)
	for i := range shared {
		shared[i] = uint64(i) * 7919
	}
	var byIDs, byChain []Request
	for i := int64(1); i <= 40; i++ {
		prompt := append(append([]uint64(nil), shared[:20+int(i%5)*16]...), uint64(i), uint64(i)*3)
		r := withIDs(i, float64(i)*0.01, prompt, 40+int(i%7)*8)
		r.Adapter = int(i % 3)
		byIDs = append(byIDs, r)
		c := r
		c.PromptLen, c.Chain, c.ChainBlock, c.IDs = len(r.IDs)-r.OutputLen, ChainOf(r.IDs, 16, r.Adapter), 16, nil
		byChain = append(byChain, c)
	}
	cfg := baseConfig(24, 256, 16)
	a, b := New(cfg), New(cfg)
	for i := range byIDs {
		a.Add(byIDs[i])
		b.Add(byChain[i])
	}
	now, preempted := 0.0, 0
	for steps := 0; !a.Idle() || !b.Idle(); steps++ {
		sa, sb := a.Step(now), b.Step(now)
		if sa != nil {
			preempted += len(sa.Preempted)
		}
		if (sa == nil) != (sb == nil) {
			t.Fatalf("step %d: one core idle, the other not", steps)
		}
		if sa.ScheduledTokens != sb.ScheduledTokens || sa.PrefixHit != sb.PrefixHit || sa.PrefixQueries != sb.PrefixQueries ||
			sa.Duration != sb.Duration || len(sa.Emitted) != len(sb.Emitted) || len(sa.Preempted) != len(sb.Preempted) {
			t.Fatalf("step %d: ids %+v, chain %+v", steps, *sa, *sb)
		}
		now = sa.End
		if steps > 10000 {
			t.Fatal("no end")
		}
	}
	if a.PrefixHits == 0 || a.PrefixHits != b.PrefixHits || preempted == 0 {
		t.Errorf("prefix hits: ids %d, chain %d (want equal and some); %d preemptions (want some)", a.PrefixHits, b.PrefixHits, preempted)
	}
	other := byChain[0]
	other.ChainBlock = 32
	c := New(cfg)
	c.Add(other)
	if st := c.Step(0); st.PrefixQueries != 0 {
		t.Errorf("a chain of 32-token blocks was read by a core of 16: %d tokens queried", st.PrefixQueries)
	}
}
