package driver

import (
	"context"
	"math"
	"time"
)

// Never is the time of no event: a Wait until Never waits for a Wake.
const Never = time.Duration(math.MaxInt64)

// Clock is the time a level runs on: a live run's wall clock, or the
// simulated time of a prediction. Only the driver's dispatcher waits on
// it; Wake may be called from any goroutine.
type Clock interface {
	// Now is the time since the level's clock started.
	Now() time.Duration
	// Wait returns once the clock reads until, once Wake is called (also
	// before Wait began, since the last return), or once ctx ends. precise
	// asks for the return to fall as near until as the clock can (an
	// arrival's send), rather than within a millisecond or so. It reports
	// false when nothing can ever happen: a simulated clock with nothing
	// in flight asked to wait until Never.
	Wait(ctx context.Context, until time.Duration, precise bool) bool
	// Wake makes the dispatcher's Wait return at once.
	Wake()
	// Wall is the wall-clock instant the clock's zero stands for, or the
	// zero time for a clock that is not a wall clock (which then has no
	// StartAt to wait for).
	Wall() time.Time
}

// WallClock is a live run's clock: monotonic time since its start. It
// paces waits as SleepUntil does, to within tens of microseconds on Linux
// at no CPU cost, and a Wake cuts a wait short unless it is already in
// its last, precise stretch.
type WallClock struct {
	start time.Time
	wake  chan struct{}
	timer *time.Timer
	// precise sleeps the last stretch of a wait (preciseSleep), and
	// reports false when Go's clock is a synctest bubble's, whose time a
	// system call does not advance: the clock then sleeps in Go.
	precise func(time.Duration) bool
}

// NewWallClock returns a clock whose zero is start. Record times taken
// against the same start (transport.Client.SetStart) are on this clock.
func NewWallClock(start time.Time) *WallClock {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &WallClock{start: start, wake: make(chan struct{}, 1), timer: t, precise: preciseSleep}
}

// Now implements Clock.
func (c *WallClock) Now() time.Duration { return time.Since(c.start) }

// Wall implements Clock.
func (c *WallClock) Wall() time.Time { return c.start }

// Wake implements Clock. A wake already pending is enough.
func (c *WallClock) Wake() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Wait implements Clock: a Go timer to within coarseMargin of until (the
// whole wait when not precise), then the kernel's precise sleep.
func (c *WallClock) Wait(ctx context.Context, until time.Duration, precise bool) bool {
	if until == Never {
		select {
		case <-ctx.Done():
		case <-c.wake:
		}
		return true
	}
	margin := time.Duration(0)
	if precise {
		margin = coarseMargin
	}
	wait := until - c.Now()
	if wait > margin {
		c.timer.Reset(wait - margin)
		select {
		case <-ctx.Done():
			c.timer.Stop()
			return true
		case <-c.wake:
			c.timer.Stop()
			return true
		case <-c.timer.C:
		}
		if !precise {
			return true
		}
		wait = until - c.Now()
	}
	select {
	case <-c.wake:
		return true
	default:
	}
	if wait > 0 && !c.precise(wait) {
		c.precise = goSleep
	}
	return true
}

// goSleep is a precise sleep in Go's own timers.
func goSleep(d time.Duration) bool { time.Sleep(d); return true }
