package bench

import (
	"math"
	"testing"
	"time"
)

// TestKeptPace: requests 8 s long arriving at 4/s into a 10 s window. A
// server keeping up finishes each 8 s after it arrived; counted over the
// window itself only the last 2 s of arrivals would have finished (0.8/s,
// "saturated"), counted over the shifted window all 40 have (4/s). A
// server that falls behind, answering 2/s, reads 2/s either way.
func TestKeptPace(t *testing.T) {
	const window = 10 * time.Second
	var keepsUp, behind []completion
	for i := 0; i < 40; i++ {
		arrival := time.Duration(i) * 250 * time.Millisecond
		done := arrival + 8*time.Second
		keepsUp = append(keepsUp, completion{doneMs: int32(done.Milliseconds()), ageMs: 8000})
		// One at a time every 500 ms from 8 s on: the backlog grows.
		slow := 8*time.Second + time.Duration(i)*500*time.Millisecond
		behind = append(behind, completion{doneMs: int32(slow.Milliseconds()), ageMs: int32((slow - arrival).Milliseconds())})
	}
	if got := keptPace(keepsUp, 0, window); got != 40 {
		t.Errorf("server keeping up: %d of 40 in the shifted window, want all", got)
	}
	if got := keptPace(behind, 0, window); got > 22 {
		t.Errorf("server falling behind: %d of 40, want about 20", got)
	}
	if got := completionRate(keptPace(keepsUp, 0, window), 40, 4); math.Abs(got-4) > 1e-9 {
		t.Errorf("completion rate %.3f/s, want the offered 4", got)
	}
	// Turns of a call: each tag has its own age, so turn 3 finishing 12 s
	// after its call's arrival counts as fully as turn 2 at 6 s.
	var turns []completion
	for i := 0; i < 10; i++ {
		arrival := int32(i * 1000)
		turns = append(turns, completion{tag: 2, doneMs: arrival + 6000, ageMs: 6000}, completion{tag: 3, doneMs: arrival + 12000, ageMs: 12000})
	}
	if got := keptPace(turns, 0, window); got != 20 {
		t.Errorf("voice turns: %d, want 20 (10 calls × 2 measured turns)", got)
	}
	if got := keptPace(nil, 0, window); got != 0 {
		t.Errorf("no completions: %v", got)
	}
}
