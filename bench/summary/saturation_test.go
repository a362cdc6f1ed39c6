package summary

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

// TestKeptPaceEdgesSpreadAges: calls arrive at 2/s into a 15 s window and a
// server keeps up, but turn 4 of each call ends 15–21 s after its arrival
// (gaps of 5–7 s). The shifted window at the median age misses the turns
// whose age is far from it, so counted against every offered turn the
// server reads about 10% short: "saturated" while it kept up. The edge
// share scales the offer alike, so the rate reads the offer; a server
// that serves at half the pace still reads about half.
func TestKeptPaceEdgesSpreadAges(t *testing.T) {
	const window = 15 * time.Second
	var keepsUp, behind []completion
	offered := int64(0)
	for i := 0; i < 30; i++ {
		arrival := int32(i * 500)
		gap := int32(5000 + 2000*(i%3)/2) // 5, 6 or 7 s
		for k := int32(1); k <= 4; k++ {
			age := 1000 + (k-1)*gap
			keepsUp = append(keepsUp, completion{tag: k, doneMs: arrival + age, ageMs: age})
			// Half the pace: every turn of call i waits for i/2 s more.
			late := age + arrival
			behind = append(behind, completion{tag: k, doneMs: arrival + late, ageMs: late})
			offered++
		}
	}
	naive := completionRate(keptPace(keepsUp, 0, window), offered, 8)
	kept, share := keptPaceEdges(keepsUp, 0, window)
	corrected := completionRate(kept, int64(math.Round(float64(offered)*share)), 8)
	t.Logf("naive %.2f/s, corrected %.2f/s, share %.3f", naive, corrected, share)
	if naive > 0.95*8 {
		t.Fatalf("uncorrected %.2f/s of 8: the test needs ages spread enough to read short", naive)
	}
	if corrected < 0.97*8 || corrected > 1.03*8 {
		t.Errorf("corrected %.2f/s (share %.3f), want the offered 8/s", corrected, share)
	}
	kept, share = keptPaceEdges(behind, 0, window)
	if got := completionRate(kept, int64(math.Round(float64(offered)*share)), 8); got > 0.7*8 {
		t.Errorf("server at half the pace reads %.2f/s of 8 (share %.3f)", got, share)
	}
}
