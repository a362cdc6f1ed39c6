package transport

import (
	"context"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// DoRetry is Do with the target's retries. rec describes the final attempt;
// rec.Attempts and rec.FirstClass keep the first attempt's outcome, so
// retries never hide errors.
func (c *Client) DoRetry(ctx context.Context, r *workload.Request, rec *record.Record, keepText bool) {
	c.Do(r, rec, keepText)
	if c.t.Retries == 0 {
		return
	}
	rec.Attempts, rec.FirstClass = 1, rec.Class
	for rec.Attempts <= c.t.Retries && retryable(rec.Class) {
		if !SleepCtx(ctx, backoff(rec.Attempts, rec.RetryAfter)) {
			return
		}
		attempts, first := rec.Attempts, rec.FirstClass
		sched, idx, tag, warm, late, waited, origin, paused := rec.Scheduled, rec.Index, rec.Tag, rec.Warmup, rec.Lateness, rec.Waited, rec.Origin, rec.Paused
		rec.Reset()
		rec.Scheduled, rec.Index, rec.Tag, rec.Warmup, rec.Lateness, rec.Waited, rec.Origin, rec.Paused = sched, idx, tag, warm, late, waited, origin, paused
		c.Do(r, rec, keepText)
		rec.Attempts, rec.FirstClass = attempts+1, first
	}
}

// SleepCtx waits for d, or until ctx ends; it reports whether the wait ran
// its course.
func SleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
