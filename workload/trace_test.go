package workload

import (
	"strings"
	"testing"
	"time"
)

// TestTraceBlocks: equal hash ids give equal text, so one line's prompt
// starts with another's shared blocks; a partial last block is the start of
// the full one; another run's nonce gives other text; lengths hold.
func TestTraceBlocks(t *testing.T) {
	b := TraceBlocks{BlockTokens: 16, Nonce: "[n1]", Seed: 1}
	a := b.Prompt(DatasetEntry{InputLength: 40, HashIDs: []int{7, 8, 9}}, 0)
	c := b.Prompt(DatasetEntry{InputLength: 48, HashIDs: []int{7, 8, 9}}, 1)
	d := b.Prompt(DatasetEntry{InputLength: 24, HashIDs: []int{7, 5}}, 2)
	words := func(s string) []string { return strings.Fields(s) }
	if n := len(words(a)); n != 40 {
		t.Errorf("40 tokens of blocks are %d words", n)
	}
	if !strings.HasPrefix(c, a) {
		t.Errorf("the partial block is not the start of the full one:\n%q\n%q", a, c)
	}
	if w := words(d); strings.Join(w[:16], " ") != strings.Join(words(a)[:16], " ") || w[16] == words(a)[16] {
		t.Error("block 7 differs between lines, or block 5 equals block 8")
	}
	other := TraceBlocks{BlockTokens: 16, Nonce: "[n2]", Seed: 1}.Prompt(DatasetEntry{InputLength: 40, HashIDs: []int{7, 8, 9}}, 0)
	if other[:20] == a[:20] {
		t.Error("another run's blocks are the same text")
	}
	// Without ids a line's prompt is its own.
	u1 := b.Prompt(DatasetEntry{InputLength: 30}, 3)
	u2 := b.Prompt(DatasetEntry{InputLength: 30}, 4)
	if u1[:8] == u2[:8] {
		t.Error("two lines without ids share a start")
	}
	seen := map[int]int{}
	if s := b.SharedTokens(DatasetEntry{InputLength: 40, HashIDs: []int{7, 8, 9}}, seen); s != 0 {
		t.Errorf("first line shares %d", s)
	}
	if s := b.SharedTokens(DatasetEntry{InputLength: 48, HashIDs: []int{7, 8, 9}}, seen); s != 40 {
		t.Errorf("second line shares %d tokens, want two full blocks and the 8 tokens of the first line's partial third (40)", s)
	}
	if s := b.SharedTokens(DatasetEntry{InputLength: 32, HashIDs: []int{5, 7}}, seen); s != 0 {
		t.Errorf("a line starting with a new block shares %d: caches match prefixes", s)
	}
}

func TestTraceSchedule(t *testing.T) {
	es := []DatasetEntry{{Timestamp: 1000 * time.Millisecond}, {Timestamp: 1500 * time.Millisecond}, {Timestamp: 3000 * time.Millisecond}}
	got := TraceSchedule(es, 2)
	want := []time.Duration{0, 250 * time.Millisecond, time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("offset %d: %v, want %v", i, got[i], want[i])
		}
	}
}
