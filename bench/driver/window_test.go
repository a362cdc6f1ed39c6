package driver

import (
	"slices"
	"testing"
	"time"
)

// TestArrivalCount checks the window rules every loop shares, in one
// table: a window bounded by a count ends at its last arrival (left out
// of InWindow, with its weight); one bounded by a span holds every
// arrival and offers them over the span; shards count their own
// arrivals against the one schedule's offered rate.
func TestArrivalCount(t *testing.T) {
	s := time.Second
	cases := []struct {
		name            string
		span            time.Duration
		shard           Shard
		first           int
		rels            []time.Duration
		want            Window
		offered, inside int64
		indexes         []int
	}{
		{"count-bounded", 0, Shard{}, 0, []time.Duration{0, s, 2 * s, 4 * s},
			Window{Arrivals: 4, InWindow: 3, SchedStart: 10 * s, SchedEnd: 14 * s, Offered: 0.75}, 8, 6, []int{0, 1, 2, 3}},
		{"span-bounded", 5 * s, Shard{}, 0, []time.Duration{0, s, 2 * s, 4 * s},
			Window{Arrivals: 4, InWindow: 4, SchedStart: 10 * s, SchedEnd: 15 * s, Offered: 0.8}, 8, 8, []int{0, 1, 2, 3}},
		{"one arrival", 0, Shard{}, 0, []time.Duration{0},
			Window{Arrivals: 1, InWindow: 0, SchedStart: 10 * s, SchedEnd: 10 * s}, 2, 0, []int{0}},
		{"nothing drawn", 0, Shard{}, 0, nil, Window{SchedStart: 10 * s, SchedEnd: 10 * s}, 0, 0, nil},
		{"shard 1 of 2, last arrival not ours", 0, Shard{Index: 1, Count: 2}, 0, []time.Duration{0, s, 2 * s},
			Window{Arrivals: 1, InWindow: 1, SchedStart: 10 * s, SchedEnd: 12 * s, Offered: 1}, 2, 2, []int{1}},
		{"shard 0 of 2, last arrival ours", 0, Shard{Index: 0, Count: 2}, 0, []time.Duration{0, s, 2 * s},
			Window{Arrivals: 2, InWindow: 1, SchedStart: 10 * s, SchedEnd: 12 * s, Offered: 1}, 4, 2, []int{0, 2}},
		{"after a warm-up of 3", 4 * s, Shard{Index: 1, Count: 2}, 3, []time.Duration{0, s},
			Window{Arrivals: 1, InWindow: 1, SchedStart: 10 * s, SchedEnd: 14 * s, Offered: 0.5}, 2, 2, []int{3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewArrivalCount(10*s, tc.span, tc.shard, tc.first)
			var mine []int
			for _, rel := range tc.rels {
				if k, ok := c.Add(rel, 2); ok {
					mine = append(mine, k)
				}
			}
			if got := c.Window(); got != tc.want {
				t.Errorf("window %+v, want %+v", got, tc.want)
			}
			if o, in := c.Weights(); o != tc.offered || in != tc.inside {
				t.Errorf("weights %d offered, %d inside; want %d, %d", o, in, tc.offered, tc.inside)
			}
			if !slices.Equal(mine, tc.indexes) {
				t.Errorf("this shard's arrivals are %v, want %v", mine, tc.indexes)
			}
		})
	}
}
