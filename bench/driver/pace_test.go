package driver

import (
	"context"
	"testing"
	"time"
)

// TestSleepUntil checks the pacing sleep's contract on the real clock: it
// never returns before the arrival is due, and a cancelled context ends a
// long wait at once. No upper bound on lateness is asserted; that is a
// measurement (docs/performance.md: the open loop at 10,000/s), not a unit test.
func TestSleepUntil(t *testing.T) {
	start := time.Now()
	now := func() time.Duration { return time.Since(start) }
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for _, wait := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 400 * time.Microsecond, 3 * time.Millisecond} {
		due := now() + wait
		if !SleepUntil(context.Background(), now, due, timer) {
			t.Fatalf("wait %v: reported cancelled", wait)
		}
		if got := now(); got < due {
			t.Errorf("wait %v: returned %v before due", wait, due-got)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	begin := now()
	if SleepUntil(ctx, now, now()+time.Hour, timer) {
		t.Error("a cancelled context's wait reported it ran its course")
	}
	if spent := now() - begin; spent > time.Minute {
		t.Errorf("cancelled wait took %v", spent)
	}
}
