package driver

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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

// ParseShard reads a shard as --shard gives it, I/N with 0 ≤ I < N; with
// an empty spec and count > 0 (--shards), I is index, as a Kubernetes
// Indexed Job's $JOB_COMPLETION_INDEX gives it.
func ParseShard(spec string, count int, index string) (Shard, error) {
	switch {
	case spec != "":
		i, n, ok := strings.Cut(spec, "/")
		idx, err1 := strconv.Atoi(i)
		cnt, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || cnt < 1 || idx < 0 || idx >= cnt {
			return Shard{}, fmt.Errorf("--shard %q: want I/N with 0 ≤ I < N, e.g. 2/4", spec)
		}
		return Shard{Index: idx, Count: cnt}, nil
	case count != 0:
		idx, err := strconv.Atoi(index)
		if count < 1 || err != nil || idx < 0 || idx >= count {
			return Shard{}, fmt.Errorf("--shards %d takes the shard from $JOB_COMPLETION_INDEX, which is %q: want 0 ≤ I < %d", count, index, count)
		}
		return Shard{Index: idx, Count: count}, nil
	}
	return Shard{}, nil
}

// ParseInstant reads an instant as --start-at gives it: RFC 3339 or Unix
// seconds (fractions allowed), between 2000 and 2200.
func ParseInstant(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		if t.Year() < 2000 || t.Year() > 2200 {
			return time.Time{}, fmt.Errorf("the year %d is not between 2000 and 2200", t.Year())
		}
		return t, nil
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || !(secs >= 946684800 && secs <= 7258118400) {
		return time.Time{}, fmt.Errorf("not an RFC 3339 time or Unix seconds between 2000 and 2200")
	}
	whole := int64(secs)
	return time.Unix(whole, int64((secs-float64(whole))*1e9)), nil
}
