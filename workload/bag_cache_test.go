package workload

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// baggedInLine is bagged as first written, every draw in line: the
// reference the cached bag must reproduce word for word.
func baggedInLine(n int, bagSeed, seed, stream uint64, pad int) string {
	bag := rand.New(rand.NewPCG(bagSeed, 0xba9))
	order := rand.New(rand.NewPCG(seed, stream*0x9e3779b97f4a7c15+1))
	picks := make([]int, n)
	for k := range picks {
		if k < opening {
			picks[k] = order.IntN(len(fillerWords))
		} else {
			picks[k] = bag.IntN(len(fillerWords))
		}
	}
	rest := picks[opening:]
	order.Shuffle(len(rest), func(a, b int) { rest[a], rest[b] = rest[b], rest[a] })
	words := make([]string, n)
	for k, w := range picks {
		words[k] = fillerWords[w]
	}
	return strings.Join(words, " ") + strings.Repeat(" "+PadWord, pad)
}

// TestBagCacheDrawsAsInLine holds the cached bag to the in-line draws
// through what defeats a cache: lengths up and down (a spread), two bag
// seeds alternating, padding, and goroutines drawing at once.
func TestBagCacheDrawsAsInLine(t *testing.T) {
	lengths := []int{BagFrom, 1000, 40, 1001, 17, 500, 2000, 16}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, n := range lengths {
				bagSeed := uint64(7 + (i+g)%2)
				seed, stream, pad := uint64(g*31+i), uint64(i), i%3
				if got, want := bagged(n, bagSeed, seed, stream, pad), baggedInLine(n, bagSeed, seed, stream, pad); got != want {
					t.Errorf("bagged(%d, %d, %d, %d, %d) differs from the in-line draws:\n%.80q\n%.80q", n, bagSeed, seed, stream, pad, got, want)
				}
			}
		}()
	}
	wg.Wait()
}
