package driver

import (
	"maps"
	"slices"
	"testing"
	"time"
)

// TestClosedCallsHoldTheirSlots: two slots, five three-turn sessions:
// each slot sends its session's turns in order after their gaps and takes
// the next session as the last turn ends (after the turnaround), so never
// more than two sessions run, and every session runs whole.
func TestClosedCallsHoldTheirSlots(t *testing.T) {
	out := bothClocks(t, scenario{service: byCall, turnaround: 10 * ms, calls: &Calls{Source: threeTurns{},
		Load: CallLoad{Concurrency: 2, Calls: 5, Seed: 2}}})
	tl := out.tally
	if tl.Started != 5 || tl.Completed != 5 || tl.WarmupTurns != 5 || len(out.recs) != 10 || tl.Shed != 0 {
		t.Fatalf("%d measured turns, tally %+v", len(out.recs), tl)
	}
	// Session k's turns take 100 + k ms each; with the gaps (2 s, 3 s)
	// and a turnaround before every turn but the first, it lasts 5,320 +
	// 3k ms, and its slot takes the next session 10 ms after its end.
	began := map[int]time.Duration{}
	for _, r := range out.recs {
		began[r.Call] = r.Origin
	}
	session := func(k int) time.Duration { return 5320*ms + time.Duration(3*k)*ms + 10*ms }
	want := map[int]time.Duration{0: 0, 1: 0, 2: session(0), 3: session(1), 4: session(0) + session(2)}
	if !maps.Equal(began, want) {
		t.Errorf("sessions began at %v, want %v", began, want)
	}
	if tl.AchievedConcurrency < 1.5 || tl.AchievedConcurrency > 2 {
		t.Errorf("achieved concurrency %.2f, want near the two slots", tl.AchievedConcurrency)
	}
}

// TestClosedCallsWindowByDuration: slots take sessions only inside the
// window; those taken run to their end.
func TestClosedCallsWindowByDuration(t *testing.T) {
	out := bothClocks(t, scenario{service: byCall, calls: &Calls{Source: threeTurns{},
		Load: CallLoad{Concurrency: 3, Duration: 8 * time.Second, Seed: 2}}})
	tl := out.tally
	// Sessions of 5.3 s: each slot starts one at 0 and one at 5.3 s, none
	// at 10.6 s, past the window.
	if tl.Started != 6 || tl.Completed != 6 || tl.ArrivalsEnd != 8*time.Second {
		t.Errorf("tally %+v", tl)
	}
}

// TestClosedCallsShard: two shards split the slots and the sessions, and
// between them run the sessions one driver runs, each once.
func TestClosedCallsShard(t *testing.T) {
	load := CallLoad{Concurrency: 4, Calls: 8, Seed: 2}
	whole := bothClocks(t, scenario{service: byCall, calls: &Calls{Source: threeTurns{}, Load: load}})
	var union []int
	for i := range 2 {
		l := load
		l.Shard = Shard{Index: i, Count: 2}
		out := bothClocks(t, scenario{service: byCall, calls: &Calls{Source: threeTurns{}, Load: l}})
		if out.tally.Started != 4 {
			t.Errorf("shard %d started %d sessions, want 4", i, out.tally.Started)
		}
		for _, r := range out.recs {
			union = append(union, r.Call)
		}
	}
	var all []int
	for _, r := range whole.recs {
		all = append(all, r.Call)
	}
	slices.Sort(union)
	slices.Sort(all)
	if !slices.Equal(union, all) {
		t.Errorf("shards ran sessions %v, one driver %v", union, all)
	}
}

// byCall serves call k's turns in 100 + k ms, so no two sessions' turns
// end at one instant (where the live clock's order of ties is the
// goroutines').
func byCall(f *Flight) time.Duration { return 100*ms + time.Duration(f.call.index)*ms }

func TestClosedCallsValidate(t *testing.T) {
	for _, l := range []CallLoad{
		{Concurrency: 2, Rate: 1, Calls: 3},
		{Concurrency: 2, MaxConcurrentCalls: 1, Calls: 3},
		{Concurrency: -1, Calls: 3},
		{Concurrency: 2},
	} {
		if l.Validate() == nil {
			t.Errorf("%+v accepted", l)
		}
	}
	if err := (CallLoad{Concurrency: 2, Calls: 3}).Validate(); err != nil {
		t.Errorf("a closed loop of calls refused: %v", err)
	}
}
