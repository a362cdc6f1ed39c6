package driver

import (
	"context"
	"time"
)

// Pacing. Go's timers are woken by the runtime's netpoller, whose epoll
// wait counts whole milliseconds: a wait of 0.3 ms sleeps up to 1 ms.
// That rounding alone was the open loop's 1.1 ms p99 send lateness at
// 5,000 and 10,000 requests per second. So the dispatcher sleeps on a Go
// timer only to within coarseMargin of an arrival, and the rest in the
// kernel's own sleep (preciseSleep), which wakes within tens of
// microseconds and, unlike a spin, costs no CPU.
const coarseMargin = 1500 * time.Microsecond

// SleepUntil waits until the run clock (now) reads due, or ctx ends; it
// reports whether the wait ran its course. timer is the caller's, reused.
func SleepUntil(ctx context.Context, now func() time.Duration, due time.Duration, timer *time.Timer) bool {
	wait := due - now()
	if wait > coarseMargin {
		timer.Reset(wait - coarseMargin)
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
		}
		wait = due - now()
	}
	if wait > 0 {
		preciseSleep(wait)
	}
	return ctx.Err() == nil
}
