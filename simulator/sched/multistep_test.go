package sched

import (
	"math"
	"slices"
	"testing"
)

// v0Config is vLLM V0's rules (prompts whole and alone) with windows of
// steps.
func v0Config(steps int, windowOutputs bool) Config {
	cfg := baseConfig(0, 4096, 64)
	cfg.WholePrompts, cfg.PrefillFirst = true, true
	cfg.SchedulerSteps, cfg.WindowOutputs = steps, windowOutputs
	return cfg
}

// stepTrace runs c from 0, adding reqs at their arrivals between steps,
// until idle, and returns a copy of each step's record.
func stepTrace(t *testing.T, c *Core, reqs []Request) []Step {
	t.Helper()
	var out []Step
	now := 0.0
	for next := 0; next < len(reqs) || !c.Idle(); {
		for next < len(reqs) && reqs[next].Arrival <= now {
			c.Add(reqs[next])
			next++
		}
		st := c.Step(now)
		if st == nil {
			now = reqs[next].Arrival
			continue
		}
		cp := *st
		cp.Emitted = slices.Clone(st.Emitted)
		cp.Admitted = slices.Clone(st.Admitted)
		cp.Finished = slices.Clone(st.Finished)
		out = append(out, cp)
		now = st.End
		if len(out) > 10000 {
			t.Fatal("no end")
		}
	}
	return out
}

// TestMultiStepAdmitsBetweenWindows: a request that arrives while a
// decode window runs waits for the window's end, as vLLM V0 schedules
// once a window; with every step scheduled it starts at the next step.
func TestMultiStepAdmitsBetweenWindows(t *testing.T) {
	// Request 2 arrives just after request 1's prompt, as its first
	// decode step starts.
	first := stepTrace(t, New(v0Config(1, false)), []Request{plain(1, 0, 64, 40)})
	reqs := []Request{plain(1, 0, 64, 40), plain(2, first[0].End+1e-6, 64, 4)}
	for _, tc := range []struct {
		steps     int
		wantAfter int // steps of request 1 before request 2 starts
	}{{1, 2}, {8, 9}} {
		c := New(v0Config(tc.steps, false))
		trace := stepTrace(t, c, reqs)
		at := slices.IndexFunc(trace, func(s Step) bool { return len(s.Admitted) == 1 && s.Admitted[0].ID == 2 })
		if at != tc.wantAfter {
			t.Errorf("steps %d: request 2 admitted at step %d, want %d", tc.steps, at, tc.wantAfter)
		}
		for i, s := range trace {
			if s.WindowStep > 0 && (len(s.Admitted) > 0 || s.PrefillTokens > 0) {
				t.Errorf("steps %d: step %d, %d into a window, admitted or prefilled", tc.steps, i, s.WindowStep)
			}
		}
	}
}

// TestMultiStepComputesTheFinishedUntilTheWindowEnds: a request that
// finishes inside a window is answered at once and its blocks freed, but
// the window's later steps still compute it, so they cost what a batch
// of both costs, not one; the next window computes the survivor alone.
func TestMultiStepComputesTheFinishedUntilTheWindowEnds(t *testing.T) {
	cfg := v0Config(8, false)
	cfg.Costs = NewCosts(baseHW, baseModel, Tuning{ComputeEff: 1, MemoryEff: 1, SeqOverhead: 0.001})
	c := New(cfg)
	trace := stepTrace(t, c, []Request{plain(1, 0, 64, 3), plain(2, 0, 64, 30)})
	// Step 0 prefills both; 1–8 are a window; request 1 ends at step 2.
	if trace[0].PrefillTokens != 128 || trace[1].BatchSize != 2 {
		t.Fatalf("step 0 prefilled %d, step 1 ran %d", trace[0].PrefillTokens, trace[1].BatchSize)
	}
	if len(trace[2].Finished) != 1 || trace[2].Finished[0].ID != 1 {
		t.Fatalf("step 2 finished %v, want request 1", trace[2].Finished)
	}
	inWindow, nextWindow := trace[5].Duration, trace[10].Duration
	if trace[5].BatchSize != 1 || inWindow-nextWindow < 0.0009 {
		t.Errorf("a window step after request 1 ended took %.6f s, the next window's %.6f s: want one sequence's overhead more",
			inWindow, nextWindow)
	}
	if !trace[8].WindowEnd || trace[8].WindowStep != 7 || trace[9].WindowStep != 0 {
		t.Errorf("the window's steps are numbered %d…%d, want 0…7", trace[1].WindowStep, trace[8].WindowStep)
	}
}

// TestMultiStepReservesTheWindow: a window reserves each sequence's
// blocks for all its steps up front (V0's lookahead slots), so none is
// needed inside it.
func TestMultiStepReservesTheWindow(t *testing.T) {
	c := New(v0Config(32, false))
	s := c.Add(plain(1, 0, 16, 100))
	c.Step(0) // the prompt: one block
	if len(s.blocks) != 1 {
		t.Fatalf("after the prompt %d blocks, want 1", len(s.blocks))
	}
	c.Step(1) // the window opens: the prompt and 32 tokens ahead
	if want := (16 + 32 + 15) / 16; len(s.blocks) != want {
		t.Errorf("a window of 32 holds %d blocks, want %d", len(s.blocks), want)
	}
}

// TestWindowOutputs: with outputs at a window's end a sequence's tokens
// of the window leave together at its last step, a finished one's at
// once, and a prefill's first token at its step.
func TestWindowOutputs(t *testing.T) {
	c := New(v0Config(4, true))
	out := c.Config().Outputs()
	trace := stepTrace(t, c, []Request{plain(1, 0, 64, 6), plain(2, 0, 64, 12)})
	type group struct{ id, from, to int }
	var got []group
	for i := range trace {
		for _, e := range trace[i].Emitted {
			if from, ok := out.Release(&trace[i], e); ok {
				got = append(got, group{int(e.Seq.ID), from, e.Index})
			}
		}
	}
	want := []group{{1, 0, 0}, {2, 0, 0}, {1, 1, 4}, {2, 1, 4}, {1, 5, 5}, {2, 5, 8}, {2, 9, 11}}
	if !slices.Equal(got, want) {
		t.Errorf("groups sent %v, want %v", got, want)
	}
}

func TestMultiStepValidated(t *testing.T) {
	cfg := baseConfig(0, 4096, 64)
	cfg.SchedulerSteps = 8
	if cfg.Validate() == nil {
		t.Error("multi-step under V1's chunked rules accepted")
	}
	cfg = v0Config(2000, false)
	if cfg.Validate() == nil {
		t.Error("2,000 steps a window accepted")
	}
	if err := v0Config(8, true).Validate(); err != nil {
		t.Error(err)
	}
}

// TestScheduleOverheadOnceAWindow: the scheduler's own cost is paid by
// the step that calls it, once a window, and by every step without
// windows.
func TestScheduleOverheadOnceAWindow(t *testing.T) {
	for _, steps := range []int{1, 4} {
		var trace [2][]Step
		for k, overhead := range []float64{0, 0.002} {
			cfg := v0Config(steps, false)
			cfg.Costs = NewCosts(baseHW, baseModel, Tuning{ComputeEff: 1, MemoryEff: 1, ScheduleOverhead: overhead})
			trace[k] = stepTrace(t, New(cfg), []Request{plain(1, 0, 64, 9)})
		}
		for i := range trace[1] {
			paid := trace[1][i].Duration - trace[0][i].Duration
			want := 0.0
			if trace[1][i].WindowStep == 0 {
				want = 0.002
			}
			if math.Abs(paid-want) > 1e-9 {
				t.Errorf("steps %d: step %d (%d into its window) paid %.6f s for scheduling, want %.6f",
					steps, i, trace[1][i].WindowStep, paid, want)
			}
		}
		if steps == 4 && trace[1][2].WindowStep != 1 {
			t.Errorf("steps 4: step 2 is %d into its window, want 1", trace[1][2].WindowStep)
		}
	}
}
