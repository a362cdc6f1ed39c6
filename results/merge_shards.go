package results

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// orderShards checks that runs are the shards 0..N−1 of one split, each
// once, and returns them in order.
func orderShards(runs []*Run) ([]*Run, error) {
	n := 0
	for i, r := range runs {
		if r == nil || r.Shard == nil || r.Shard.Count < 1 {
			return nil, fmt.Errorf("file %d is not a shard's result (no shard identity): run it with --shard I/N", i+1)
		}
		if n == 0 {
			n = r.Shard.Count
		}
		if r.Shard.Count != n {
			return nil, fmt.Errorf("the files are shards of splits into %d and %d parts", n, r.Shard.Count)
		}
		if r.Shard.Index < 0 || r.Shard.Index >= n {
			return nil, fmt.Errorf("file %d says it is shard %d of %d: not a shard of that split", i+1, r.Shard.Index, n)
		}
		if err := plausible(r); err != nil {
			return nil, fmt.Errorf("file %d (shard %d/%d): %v", i+1, r.Shard.Index, n, err)
		}
	}
	if n > len(runs) {
		return nil, fmt.Errorf("the files are shards of a split into %d parts, and only %d are given: a merge without the others would undercount the load", n, len(runs))
	}
	if key := configKey(runs[0].Config); true {
		for i, r := range runs[1:] {
			if k := configKey(r.Config); k != key {
				return nil, fmt.Errorf("file %d ran another configuration than file 1 (%s differ): shards of one load run one configuration", i+2, configDiff(runs[0].Config, r.Config))
			}
		}
	}
	out := make([]*Run, n)
	for _, r := range runs {
		if out[r.Shard.Index] != nil {
			return nil, fmt.Errorf("shard %d/%d is given twice", r.Shard.Index, n)
		}
		out[r.Shard.Index] = r
	}
	var missing []string
	for i, r := range out {
		if r == nil {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shards %v of %d are missing: a merge without them would undercount the load", missing, n)
	}
	return out, nil
}

// agreement warns when the shards did not start one load together.
func agreement(shards []*Run) []string {
	var w []string
	if !oneTarget(shards) {
		w = append(w, "the shards sent to different base URLs (each to a replica of its own, as a fleet routed by arrival): the merged figures are the fleet's, "+
			"and no server view is kept, as each shard's server saw only its own share")
	}
	var starts []time.Time
	ref := shards[0].Shard.StartAt
	for i, r := range shards {
		s := r.Shard
		if i > 0 && ((s.StartAt == nil) != (ref == nil) || s.StartAt != nil && !s.StartAt.Equal(*ref)) {
			w = append(w, fmt.Sprintf("shard %d was told to start at another instant than shard 0 (--start-at)", i))
		}
		if s.StartAt != nil && s.StartLatenessMs > math.Max(50, 10*r.WindowSeconds) {
			w = append(w, lateShard(i, r))
		}
		starts = append(starts, r.WindowStartedAt)
	}
	if ref == nil {
		sort.Slice(starts, func(a, b int) bool { return starts[a].Before(starts[b]) })
		if spread := starts[len(starts)-1].Sub(starts[0]); spread > time.Second {
			w = append(w, fmt.Sprintf("the shards' windows started %.1f s apart (no --start-at): the merged load was never offered at once", spread.Seconds()))
		}
	}
	return w
}

// lateShard says how late shard i came to the schedule and what that did:
// arrivals already due went out at once, each measured from when it was
// due, so its latencies carry the delay rather than hiding it.
func lateShard(i int, r *Run) string {
	msg := fmt.Sprintf("shard %d started %.0f ms after --start-at", i, r.Shard.StartLatenessMs)
	if n := r.Arrivals.WindowArrivals; n > 0 && r.Calls == nil {
		msg += fmt.Sprintf(": %d of its %d arrivals (%.1f%%) went out late, at once, and are measured from when they were due (their latency includes the delay)",
			r.Arrivals.LateSends, n, 100*float64(r.Arrivals.LateSends)/float64(n))
	} else {
		msg += ": its arrivals already due went out at once and are measured from when they were due"
	}
	return msg
}

// configKey is the configuration as JSON, for comparing shards. The base
// URL is left out: shards of one load may each send to a replica of its
// own (a fleet routed round-robin by arrival), which agreement notes.
func configKey(c Config) string {
	c.BaseURL = ""
	b, _ := json.Marshal(c)
	return string(b)
}

// oneTarget reports whether every shard sent to the same base URL.
func oneTarget(shards []*Run) bool {
	for _, r := range shards[1:] {
		if r.Config.BaseURL != shards[0].Config.BaseURL {
			return false
		}
	}
	return true
}

// configDiff names the configuration fields that differ.
func configDiff(a, b Config) string {
	var ma, mb map[string]json.RawMessage
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	var diff []string
	for k := range ma {
		if string(ma[k]) != string(mb[k]) {
			diff = append(diff, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	return strings.Join(diff, ", ")
}

// plausible says what in a shard's result cannot be a measurement:
// negative or absurd counts, times outside 2000–2200, a window that is not
// a finite span.
func plausible(r *Run) error {
	if err := plausibleCounts(r); err != nil {
		return err
	}
	for name, t := range map[string]time.Time{"started_at": r.StartedAt, "window_started_at": r.WindowStartedAt} {
		if t.Year() < 2000 || t.Year() > 2200 {
			return fmt.Errorf("%s is %s: not when a run ran", name, t.Format(time.RFC3339))
		}
	}
	return nil
}
