package bench

import (
	"fmt"
	"time"

	"github.com/kneebench/knee/results"
)

// Shard is one part of a load split across processes. Shard Index of
// Count sends arrival k (open loop), worker k (closed loop) or call k (the
// call workload) when k mod Count is Index, and request k carries the
// prompt request k of a single process would, so the shards together send
// exactly the one schedule a single process draws from the seed. The zero
// value is the whole load.
type Shard struct {
	Index, Count int
}

// Sharded reports whether s is a real part of a split load.
func (s Shard) Sharded() bool { return s.Count > 1 }

// Mine reports whether item k (an arrival, a worker, a call) is this
// shard's.
func (s Shard) Mine(k int) bool { return s.Count <= 1 || k%s.Count == s.Index }

// Share is how many of the items 0..n-1 are this shard's.
func (s Shard) Share(n int) int {
	if s.Count <= 1 {
		return n
	}
	q, r := n/s.Count, n%s.Count
	if s.Index < r {
		q++
	}
	return q
}

// global is the index, among all shards, of this shard's j-th item of a
// run of items starting at base.
func (s Shard) global(base, j int) int {
	if s.Count <= 1 {
		return base + j
	}
	return base + s.Index + j*s.Count
}

// Validate checks the shard's identity.
func (s Shard) Validate() error {
	if s.Count < 0 || s.Count > 0 && (s.Index < 0 || s.Index >= s.Count) {
		return fmt.Errorf("shard %d/%d: the index must be in [0, %d)", s.Index, s.Count, max(s.Count, 1))
	}
	return nil
}

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
func shardInfo(s Shard, startAt time.Time, late time.Duration) *results.Shard {
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
