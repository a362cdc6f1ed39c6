package workload

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"unsafe"
)

// BagFrom is the shortest synthetic text, in words, drawn from a bag.
// Below it every text is a fresh draw, so that short prompts do not
// repeat one another's opening words.
const BagFrom = 16

// PadWord is what Synthetic.Pad appends: one token after a space under
// the common tokenizers, which a probe checks before it is used.
const PadWord = "a"

// opening is how many words of a bagged text are drawn fresh.
const opening = 3

// bagged returns n filler words: three drawn fresh from (seed, stream),
// then the first n−3 words of a bag drawn from bagSeed alone, in an order
// drawn from (seed, stream). Every text of n words holds the same words
// but three, so a tokenizer that counts word by word (all the common
// ones) gives all about the same count, and a prompt sized by probes
// against the server is that size every time, in every sweep level,
// rather than within the spread of random words' costs (±9% for a
// 64-token prompt on a small vocabulary, as a sweep level's mean once
// missed by). The fresh opening keeps texts from sharing their first
// words, so none warms another.
func bagged(n int, bagSeed, seed, stream uint64, pad int) string {
	order := rand.New(rand.NewPCG(seed, stream*0x9e3779b97f4a7c15+1))
	picks := make([]int, n)
	// n ≥ BagFrom > opening: fillerText draws short texts afresh.
	for k := range opening {
		picks[k] = order.IntN(len(fillerWords))
	}
	copy(picks[opening:], bagOf(bagSeed, n))
	size := n - 1 + pad*(1+len(PadWord))
	for _, w := range picks {
		size += len(fillerWords[w])
	}
	rest := picks[opening:]
	order.Shuffle(len(rest), func(a, b int) { rest[a], rest[b] = rest[b], rest[a] })
	// Sized exactly, and each spaced word stored as two 8-byte words
	// rather than copied: a long prompt's thousand short copies were a
	// fifth of a predicted level's time. The slack takes the last
	// store's overhang.
	buf := make([]byte, size+packedSlack)
	off := copy(buf, fillerWords[picks[0]])
	for _, w := range picks[1:] {
		off = spacedFiller[w].put(buf, off)
	}
	for range pad {
		off = spacedPad.put(buf, off)
	}
	// buf is never written again, so the string may share it.
	return unsafe.String(&buf[0], off)
}

// packedWord is a word with its leading space, in two little-endian
// 8-byte words, zero-padded, and its length.
type packedWord struct {
	lo, hi uint64
	n      int
}

// packedSlack is what a buffer written by put needs past its text.
const packedSlack = 16

func packWord(w string) packedWord {
	var b [16]byte
	n := copy(b[:], " "+w)
	if n != len(w)+1 {
		panic("workload: a filler word longer than 15 bytes: " + w)
	}
	return packedWord{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:]), n}
}

// put writes p at off in buf, which has packedSlack bytes past the
// text's end, and returns the offset after it.
func (p *packedWord) put(buf []byte, off int) int {
	binary.LittleEndian.PutUint64(buf[off:], p.lo)
	binary.LittleEndian.PutUint64(buf[off+8:], p.hi)
	return off + p.n
}

// spacedFiller is fillerWords packed, and spacedPad PadWord.
var (
	spacedFiller = func() []packedWord {
		out := make([]packedWord, len(fillerWords))
		for i, w := range fillerWords {
			out[i] = packWord(w)
		}
		return out
	}()
	spacedPad = packWord(PadWord)
)

// aBag is the words a bag seed draws, in the order drawn: a text of n
// words takes the first n−opening.
type aBag struct {
	seed  uint64
	words []int
}

// lastBag keeps the bag drawn last: every text of a level is drawn from
// the same bag, so drawing it once saves half of a long prompt's random
// draws. A bag's draws are a sequence, so a longer text's bag starts
// with a shorter one's, and texts of spread lengths share one.
var lastBag atomic.Pointer[aBag]

// bagOf is the bag of an n-word text under bagSeed, drawn from bagSeed
// alone (the same draws bagged made when it drew them in line). The
// slice is shared: read it, never write it.
func bagOf(bagSeed uint64, n int) []int {
	want := max(n-opening, 0)
	if b := lastBag.Load(); b != nil && b.seed == bagSeed && len(b.words) >= want {
		return b.words[:want]
	}
	r := rand.New(rand.NewPCG(bagSeed, 0xba9))
	words := make([]int, want)
	for k := range words {
		words[k] = r.IntN(len(fillerWords))
	}
	lastBag.Store(&aBag{bagSeed, words})
	return words
}

// wordsFor is how many filler words stand for tokens tokens.
func wordsFor(tokens int, wordsPerToken float64) int {
	if wordsPerToken <= 0 {
		wordsPerToken = 1
	}
	return max(int(float64(tokens)*wordsPerToken+0.5), 1)
}

// fillerText is tokens tokens of filler: from the bag when long enough,
// else drawn fresh (see Filler), then pad PadWords.
func fillerText(tokens int, wordsPerToken float64, bagSeed, seed, stream uint64, pad int) string {
	n := wordsFor(tokens, wordsPerToken)
	if n >= BagFrom {
		return bagged(n, bagSeed, seed, stream, pad)
	}
	text := Filler(tokens, wordsPerToken, seed, stream)
	if pad > 0 {
		text += strings.Repeat(" "+PadWord, pad)
	}
	return text
}
