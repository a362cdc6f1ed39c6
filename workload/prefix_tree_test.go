package workload

import (
	"hash/maphash"
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveShare is the tracker's rule with every block's chained hash kept
// in one set: what the prefix tree must answer alike.
type naiveShare struct {
	seed maphash.Seed
	seen map[uint64]bool
}

func (n *naiveShare) share(text string) float32 {
	var h maphash.Hash
	h.SetSeed(n.seed)
	shared, prefix := 0, true
	for off := 0; off+prefixBlock <= len(text); off += prefixBlock {
		h.WriteString(text[off : off+prefixBlock])
		sum := h.Sum64()
		if prefix && n.seen[sum] {
			shared = off + prefixBlock
			continue
		}
		prefix = false
		n.seen[sum] = true
	}
	return float32(shared) / float32(len(text))
}

// TestPrefixTreeMatchesASet: on prompts built from a few shared starts,
// branching and extending one another in random orders, the tree's
// shares equal those of a set of every block's chained hash.
func TestPrefixTreeMatchesASet(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	block := func(k int) string { return strings.Repeat(string(rune('a'+k%26)), prefixBlock) }
	for trial := range 50 {
		tr := NewPrefixTracker()
		naive := &naiveShare{seed: tr.seed, seen: map[uint64]bool{}}
		for i := range 200 {
			// A prompt: blocks drawn from a small alphabet so prefixes
			// repeat and branch, with a ragged tail.
			n := rng.IntN(12)
			var b strings.Builder
			for range n {
				b.WriteString(block(rng.IntN(3)))
			}
			b.WriteString(strings.Repeat("z", rng.IntN(prefixBlock)))
			text := b.String()
			if text == "" {
				continue
			}
			got, want := tr.Share(&Request{Prompt: text}), naive.share(text)
			if got != want {
				t.Fatalf("trial %d prompt %d (%d bytes): tree %g, set %g", trial, i, len(text), got, want)
			}
		}
	}
}
