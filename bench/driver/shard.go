package driver

import "fmt"

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

// Global is the index, among all shards, of this shard's j-th item of a
// run of items starting at base.
func (s Shard) Global(base, j int) int {
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
