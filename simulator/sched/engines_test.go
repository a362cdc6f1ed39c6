package sched

import "testing"

// TestWholePrompts: vLLM V0 without chunked prefill and TensorRT-LLM
// without chunked context compute a prompt in one step or wait: the second
// 60-token prompt does not fit the 40 tokens a 100-token step has left,
// so it waits for the next step whole, where V1 would take a 40-token
// chunk of it; a prompt past the whole budget never fits.
func TestWholePrompts(t *testing.T) {
	for _, whole := range []bool{false, true} {
		cfg := baseConfig(0, 100, 8)
		cfg.WholePrompts = whole
		c := New(cfg)
		c.Add(Request{ID: 1, PromptLen: 60, OutputLen: 4})
		c.Add(Request{ID: 2, PromptLen: 60, OutputLen: 4})
		st := c.Step(0)
		want := map[bool]int{false: 100, true: 60}[whole]
		if st.PrefillTokens != want || whole && st.StopReason != StopBudget {
			t.Errorf("whole %v: %d prompt tokens in the first step (stop %q), want %d", whole, st.PrefillTokens, st.StopReason, want)
		}
		if got := c.Fits(150, 4); got == whole {
			t.Errorf("whole %v: a 150-token prompt against a 100-token step fits %v", whole, got)
		}
	}
}

// TestReserveOutputNeverPreempts: TensorRT-LLM's GUARANTEED_NO_EVICT
// admits a request only when its whole answer's blocks are there beside
// the running requests' reservations: on a cache of 20 blocks, requests of
// 32 prompt and 96 answer tokens (8 blocks) run two at a time and none is
// preempted, where admitting by the prompt alone runs more and preempts.
func TestReserveOutputNeverPreempts(t *testing.T) {
	for _, reserve := range []bool{false, true} {
		cfg := baseConfig(20, 8192, 16)
		cfg.PrefixCaching, cfg.ReserveOutput = false, reserve
		c := New(cfg)
		for i := range 6 {
			c.Add(Request{ID: int64(i), PromptLen: 32, OutputLen: 96})
		}
		most := 0
		for now := 0.0; !c.Idle(); {
			st := c.Step(now)
			most = max(most, st.BatchSize)
			now = st.End
		}
		switch {
		case reserve && (c.Preemptions != 0 || most != 2):
			t.Errorf("reserving: %d preemptions, at most %d running; want none and 2", c.Preemptions, most)
		case !reserve && c.Preemptions == 0:
			t.Errorf("admitting by the prompt alone preempted nothing (at most %d running): the test shows nothing", most)
		}
	}
}
