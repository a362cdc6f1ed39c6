package sched

import (
	"slices"
	"testing"
)

// TestPrefillFirstStallsDecodes: under SGLang's rules a request decoding
// when a 250-token prompt arrives gets no token in the three 100-token
// steps that compute that prompt, then decodes beside the new one; under
// vLLM's it decodes in every step and the prompt takes the rest of each
// step's budget.
func TestPrefillFirstStallsDecodes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		prefillFirst bool
		// decodes is request 1's tokens in each step after the arrival.
		decodes []int
	}{
		{"sglang", true, []int{0, 0, 0, 1}},
		{"vllm", false, []int{1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(1000, 100, 8)
			cfg.PrefillFirst = tc.prefillFirst
			c := New(cfg)
			c.Add(plain(1, 0, 10, 50))
			st := c.Step(0)
			if len(st.Emitted) != 1 {
				t.Fatalf("request 1's prompt step emitted %d", len(st.Emitted))
			}
			c.Add(plain(2, st.End, 250, 5))
			var got []int
			now := st.End
			for range tc.decodes {
				st = c.Step(now)
				n := 0
				for _, e := range st.Emitted {
					if e.Seq.ID == 1 {
						n++
					}
				}
				got = append(got, n)
				now = st.End
			}
			if !slices.Equal(got, tc.decodes) {
				t.Errorf("request 1's tokens per step: %v, want %v", got, tc.decodes)
			}
		})
	}
}

// TestPrefillFirstDecodesWhenNothingFits: a waiting request the cache
// cannot take does not stall the running ones: the step that admits
// nothing decodes.
func TestPrefillFirstDecodesWhenNothingFits(t *testing.T) {
	cfg := baseConfig(4, 1000, 8)
	cfg.PrefillFirst = true
	c := New(cfg)
	c.Add(plain(1, 0, 40, 8)) // 3 of the 4 blocks
	st := c.Step(0)
	c.Add(plain(2, st.End, 64, 2)) // 4 blocks: cannot be admitted
	st = c.Step(st.End)
	if len(st.Admitted) != 0 || st.DecodeTokens != 1 || len(st.Emitted) != 1 {
		t.Errorf("admitted %d, decoded %d, emitted %d; want 0, 1, 1", len(st.Admitted), st.DecodeTokens, len(st.Emitted))
	}
}

// TestLPMAdmitsTheWarmestFirst: with one batch slot free, FCFS admits the
// request that came first; longest-prefix-match the one whose prompt the
// cache already holds, though it came later.
func TestLPMAdmitsTheWarmestFirst(t *testing.T) {
	warm := uniquePrompt(7, 64)
	for _, tc := range []struct {
		policy string
		want   int64
	}{{PolicyFCFS, 2}, {PolicyLPM, 3}} {
		cfg := baseConfig(1000, 10000, 1)
		cfg.Policy = tc.policy
		c := New(cfg)
		c.Add(withIDs(1, 0, warm, 1))
		st := c.Step(0) // request 1 computes the warm prompt and finishes
		if len(st.Finished) != 1 {
			t.Fatalf("%s: request 1 did not finish in one step", tc.policy)
		}
		c.Add(withIDs(2, st.End, uniquePrompt(8, 64), 1))
		c.Add(withIDs(3, st.End, warm, 1))
		st = c.Step(st.End)
		if len(st.Admitted) != 1 || st.Admitted[0].ID != tc.want {
			t.Errorf("%s admitted %v, want request %d", tc.policy, ids(st.Admitted), tc.want)
		}
	}
}

// TestResetPrefixCache: after a reset the same prompt finds nothing
// cached; a reset while a request holds blocks is refused and forgets
// nothing.
func TestResetPrefixCache(t *testing.T) {
	c := New(baseConfig(1000, 10000, 8))
	prompt := uniquePrompt(3, 64)
	c.Add(withIDs(1, 0, prompt, 2))
	st := c.Step(0)
	if err := c.ResetPrefixCache(); err == nil {
		t.Fatal("a reset while request 1 runs was accepted")
	}
	for st != nil && len(st.Finished) == 0 {
		st = c.Step(st.End)
	}
	c.Add(withIDs(2, st.End, prompt, 1))
	st = c.Step(st.End)
	if st.Admitted[0].CachedTokens != 48 {
		t.Fatalf("before the reset request 2 hit %d tokens, want 48", st.Admitted[0].CachedTokens)
	}
	for st != nil && len(st.Finished) == 0 {
		st = c.Step(st.End)
	}
	if err := c.ResetPrefixCache(); err != nil {
		t.Fatal(err)
	}
	c.Add(withIDs(3, st.End, prompt, 1))
	if st = c.Step(st.End); st.Admitted[0].CachedTokens != 0 {
		t.Errorf("after the reset request 3 hit %d tokens, want 0", st.Admitted[0].CachedTokens)
	}
}

// TestReserveDecodesEndsALongPromptBurst: twenty 1,000-token prompts at
// once on a cache of 200 blocks (3,200 tokens: three prompts, 11 blocks
// over) with chunks of 128. Without SGLang's reserve for the running
// answers (ReserveDecodes), a fourth prompt's first chunk takes 8 of the
// 11 blocks, its second cannot grow and preempts it, it is admitted again,
// and as a prompt is always pending no step decodes: no answer ever ends.
// With it, the fourth prompt waits, the three decode, and all twenty end.
func TestReserveDecodesEndsALongPromptBurst(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reserve bool
		wantAll bool
	}{
		{"without the reserve", false, false},
		{"with it", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(200, 128, 64)
			cfg.PrefillFirst, cfg.ReserveDecodes = true, tc.reserve
			c := New(cfg)
			for i := range 20 {
				c.Add(plain(int64(i), 0, 1000, 40))
			}
			done, now := 0, 0.0
			for range 5000 {
				st := c.Step(now)
				if st == nil {
					break
				}
				done += len(st.Finished)
				now = st.End
			}
			if got := done == 20; got != tc.wantAll {
				t.Errorf("%d of 20 requests ended in 5,000 steps", done)
			}
		})
	}
}

// TestNewTokenRatio: the ratio falls by (0.7 − 0.14)/600 a decode batch to
// 0.14, and a retraction sets it to the running requests' decoded share
// plus 20 steps each.
func TestNewTokenRatio(t *testing.T) {
	cfg := baseConfig(1000, 1000, 8)
	cfg.ReserveDecodes = true
	c := New(cfg)
	for range 1000 {
		c.updateNewTokenRatio(&Step{DecodeTokens: 1})
	}
	near(t, "ratio after 1,000 decode batches", c.newTokenRatio, minNewTokenRatio, 1e-9)
	c.running = []*Seq{{Request: plain(1, 0, 10, 100), generated: 30}, {Request: plain(2, 0, 10, 100), generated: 10}}
	c.updateNewTokenRatio(&Step{Preempted: []*Seq{{}}})
	near(t, "ratio after a retraction", c.newTokenRatio, (40+2*20)/200.0, 1e-9)
}
