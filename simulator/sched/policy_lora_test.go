package sched

import (
	"math"
	"testing"
)

// smallCore is a core with few blocks and a plain cost: every step 10 ms
// plus 1 µs a token, so tests read the schedule, not the roofline.
func smallCore(policy string, lora *LoRA, blocks int) *Core {
	cfg := Config{NumBlocks: blocks, BlockSize: 16, MaxNumBatchedTokens: 512, MaxNumSeqs: 64, Policy: policy, LoRA: lora,
		Costs: Costs{FLOPS: 1e15, Bandwidth: 1e15, Tuning: Tuning{ComputeEff: 1, MemoryEff: 1, StepOverhead: 0.01}}}
	return New(cfg)
}

// run steps the core until idle, returning each request's first-token
// and finish times by id.
func runCore(c *Core) (first, done map[int64]float64) {
	first, done = map[int64]float64{}, map[int64]float64{}
	now := 0.0
	for range 100000 {
		st := c.Step(now)
		if st == nil {
			break
		}
		for _, e := range st.Emitted {
			if e.Index == 0 {
				first[e.Seq.ID] = st.End
			}
		}
		for _, s := range st.Finished {
			done[s.ID] = st.End
		}
		now = st.End
	}
	return first, done
}

// TestPriorityOrdersTheQueue: under the priority policy a waiting
// request of a lower value is admitted before earlier arrivals of a
// higher one; under FCFS, in arrival order.
func TestPriorityOrdersTheQueue(t *testing.T) {
	for _, tc := range []struct {
		policy string
		first  int64
	}{{PolicyFCFS, 0}, {PolicyPriority, 3}} {
		c := smallCore(tc.policy, nil, 1000)
		c.cfg.MaxNumSeqs = 1
		for i := range 4 {
			prio := 1
			if i == 3 {
				prio = 0
			}
			c.Add(Request{ID: int64(i), Arrival: float64(i) * 1e-6, PromptLen: 32, OutputLen: 4, Priority: prio})
		}
		first, _ := runCore(c)
		earliest := int64(-1)
		for id, at := range first {
			if earliest < 0 || at < first[earliest] {
				earliest = id
			}
		}
		if earliest != tc.first {
			t.Errorf("%s: request %d answered first, want %d (%v)", tc.policy, earliest, tc.first, first)
		}
	}
}

// TestPriorityPreemptsTheLowest: when memory runs out the priority
// policy preempts the running request of the highest value, not the
// newest; FCFS preempts the newest.
func TestPriorityPreemptsTheLowest(t *testing.T) {
	for _, tc := range []struct {
		policy string
		victim int64
	}{{PolicyFCFS, 2}, {PolicyPriority, 0}} {
		// 3 requests of 16 prompt + 48 output tokens need 4 blocks each at
		// the end; 10 blocks hold two and a half.
		c := smallCore(tc.policy, nil, 10)
		for i, prio := range []int{5, 0, 0} {
			c.Add(Request{ID: int64(i), Arrival: float64(i) * 1e-6, PromptLen: 16, OutputLen: 48, Priority: prio})
		}
		var preempted []int64
		now := 0.0
		for range 1000 {
			st := c.Step(now)
			if st == nil {
				break
			}
			for _, s := range st.Preempted {
				preempted = append(preempted, s.ID)
			}
			now = st.End
		}
		if len(preempted) == 0 || preempted[0] != tc.victim {
			t.Errorf("%s: preempted %v, want %d first", tc.policy, preempted, tc.victim)
		}
	}
}

// TestLoRASlots: with one adapter slot, requests of two adapters cannot
// share a batch: the second adapter's wait until the first's finish, and
// its load (host to device) joins the step that first schedules it. A
// waiting request of the resident adapter is admitted past them.
func TestLoRASlots(t *testing.T) {
	lora := &LoRA{MaxLoRAs: 1, MaxCPULoRAs: 2, AdapterBytes: 1e8, HostToDevice: 1e10, DiskToHost: 1e9}
	c := smallCore(PolicyFCFS, lora, 1000)
	// a1, b, a2: a2 is admitted with a1, past b.
	c.Add(Request{ID: 0, PromptLen: 32, OutputLen: 8, Adapter: 1})
	c.Add(Request{ID: 1, Arrival: 1e-6, PromptLen: 32, OutputLen: 8, Adapter: 2})
	c.Add(Request{ID: 2, Arrival: 2e-6, PromptLen: 32, OutputLen: 8, Adapter: 1})
	first, done := runCore(c)
	if !(first[2] < first[1]) || !(first[1] > done[0] && first[1] > done[2]) {
		t.Errorf("first tokens %v, done %v: want adapter 1's two before adapter 2's, which waits for them", first, done)
	}
	loads, cold := c.AdapterLoads()
	if loads != 2 || cold != 2 {
		t.Errorf("%d loads (%d cold), want 2 and 2", loads, cold)
	}
	// The first step loads adapter 1 from disk: 0.1 s + 0.01 s, then its
	// 10 ms step.
	if want := 1e8/1e9 + 1e8/1e10 + 0.01; math.Abs(first[0]-want) > 0.002 {
		t.Errorf("adapter 1's first token at %.4f s, want about %.4f", first[0], want)
	}
}
