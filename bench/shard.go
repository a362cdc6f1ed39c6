package bench

import (
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
)

// waitUntil sleeps until the wall instant at, on the run's clock; it
// returns how late the run already was (0 when it waited), and false when
// ctx ended first.
func waitUntil(done <-chan struct{}, at time.Time) (time.Duration, bool) {
	d := time.Until(at)
	if d <= 0 {
		return -d, true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return 0, true
	case <-done:
		return 0, false
	}
}

// shardInfo is the result's record of the shard, nil for a whole load.
func shardInfo(s driver.Shard, startAt time.Time, late time.Duration) *results.Shard {
	if !s.Sharded() && startAt.IsZero() {
		return nil
	}
	info := &results.Shard{Index: s.Index, Count: max(s.Count, 1)}
	if !startAt.IsZero() {
		at := startAt.UTC()
		info.StartAt, info.StartLatenessMs = &at, float64(late)/float64(time.Millisecond)
	}
	return info
}
