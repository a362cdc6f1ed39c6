package sched

import (
	"math/rand/v2"
	"testing"
)

// TestHashTableMatchesMap drives the table and a Go map with the same
// random operations and checks they always agree: sized for its entries,
// and grown from one slot's worth to 300 entries.
func TestHashTableMatchesMap(t *testing.T) {
	for _, tc := range []struct{ capacity, most int }{{64, 64}, {1, 300}} {
		testHashTableMatchesMap(t, tc.capacity, tc.most)
	}
}

func testHashTableMatchesMap(t *testing.T, capacity, most int) {
	r := rand.New(rand.NewPCG(1, 2))
	tab := newHashTable(capacity)
	ref := map[uint64]int32{}
	for op := 0; op < 200000; op++ {
		h := uint64(r.IntN(300)) * 0x100000001b3 // collisions in the home slots
		b := int32(r.IntN(64))
		switch r.IntN(3) {
		case 0:
			if len(ref) < most {
				_, had := ref[h]
				if tab.putIfAbsent(h, b) == had {
					t.Fatalf("op %d: putIfAbsent(%x) disagreed (had=%v)", op, h, had)
				}
				if !had {
					ref[h] = b
				}
			}
		case 1:
			if v, ok := ref[h]; ok && (v == b || r.IntN(2) == 0) {
				tab.deleteIf(h, v)
				delete(ref, h)
			} else {
				tab.deleteIf(h, b+100) // never matches: must be a no-op
			}
		}
		v, ok := tab.get(h)
		rv, rok := ref[h]
		if ok != rok || v != rv {
			t.Fatalf("op %d: get(%x) = %d,%v; map says %d,%v", op, h, v, ok, rv, rok)
		}
		if tab.n != len(ref) || 2*tab.n > len(tab.keys) {
			t.Fatalf("op %d: size %d, map %d", op, tab.n, len(ref))
		}
	}
	for h, v := range ref {
		if got, ok := tab.get(h); !ok || got != v {
			t.Fatalf("final get(%x) = %d,%v want %d", h, got, ok, v)
		}
	}
}

// TestLongestFit: 100 blocks of 16 tokens hold one sequence of 1,600
// tokens at most; a limit under that is the answer; no blocks, none.
func TestLongestFit(t *testing.T) {
	for _, tc := range []struct{ blocks, limit, want int }{
		{100, 131072, 1600}, {100, 1000, 1000}, {0, 131072, 0}, {100, 1600, 1600}, {100, 1601, 1600},
	} {
		c := Config{BlockSize: 16, NumBlocks: tc.blocks}
		if got := c.LongestFit(tc.limit); got != tc.want {
			t.Errorf("%d blocks, limit %d: %d, want %d", tc.blocks, tc.limit, got, tc.want)
		}
	}
}
