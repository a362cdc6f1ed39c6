package bench

import (
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
)

// ShardInfo is the result's record of the shard, nil for a whole load.
func ShardInfo(s driver.Shard, startAt time.Time, late time.Duration) *results.Shard {
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
