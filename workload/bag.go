package workload

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
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
	return writeWords(appendBagged(nil, n, bagSeed, seed, stream, pad))
}

// appendBagged appends bagged's words to dst, as indices into
// FillerVocabulary.
func appendBagged(dst []uint16, n int, bagSeed, seed, stream uint64, pad int) []uint16 {
	pcg := rand.NewPCG(seed, stream*0x9e3779b97f4a7c15+1)
	order := rand.New(pcg)
	// n ≥ BagFrom > opening: appendFillerText draws short texts afresh.
	at := len(dst)
	for range opening {
		dst = append(dst, uint16(order.IntN(len(fillerWords))))
	}
	for _, w := range bagOf(bagSeed, n) {
		dst = append(dst, uint16(w))
	}
	shuffle(pcg, dst[at+opening:])
	for range pad {
		dst = append(dst, padIndex)
	}
	return dst
}

// writeWords is the text words stand for: the words of FillerVocabulary
// they index, joined by single spaces.
func writeWords(words []uint16) string {
	if len(words) == 0 {
		return ""
	}
	size := textSize(words)
	// Sized exactly, and each spaced word stored as two 8-byte words
	// rather than copied: a long prompt's thousand short copies were a
	// fifth of a predicted level's time. The slack takes the last
	// store's overhang; the first word's space is stored, then skipped.
	buf := make([]byte, 1+size+packedSlack)
	putWords(buf, 0, words)
	// buf is never written again, so the string may share it.
	return unsafe.String(&buf[1], size)
}

// textSize is the length of the text words stand for.
func textSize(words []uint16) int {
	if len(words) == 0 {
		return 0
	}
	size := len(words) - 1
	for _, w := range words {
		size += int(spacedFiller[w].n) - 1
	}
	return size
}

// appendWordsText appends the text words stand for to dst.
func appendWordsText(dst []byte, words []uint16) []byte {
	n := len(dst)
	if n == 0 || len(words) == 0 {
		return append(dst, writeWords(words)...)
	}
	// The first word's space is stored over dst's last byte, then put
	// back.
	size := textSize(words)
	last := dst[n-1]
	dst = slices.Grow(dst, size+packedSlack)[:n+size+packedSlack]
	putWords(dst, n-1, words)
	dst[n-1] = last
	return dst[:n+size]
}

// putWords writes the words spaced at off in buf (a space, the first word,
// a space, the next word...), which has packedSlack bytes past them.
func putWords(buf []byte, off int, words []uint16) int {
	for _, w := range words {
		off = spacedFiller[w].put(buf, off)
	}
	return off
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

// spacedFiller is FillerVocabulary packed.
var spacedFiller = func() []packedWord {
	out := make([]packedWord, len(fillerVocabulary))
	for i, w := range fillerVocabulary {
		out[i] = packWord(w)
	}
	return out
}()

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

// appendFillerText appends tokens tokens of filler to dst: from the bag
// when long enough, else drawn fresh (see Filler), then pad PadWords.
func appendFillerText(dst []uint16, tokens int, wordsPerToken float64, bagSeed, seed, stream uint64, pad int) []uint16 {
	n := wordsFor(tokens, wordsPerToken)
	if n >= BagFrom {
		return appendBagged(dst, n, bagSeed, seed, stream, pad)
	}
	// Filler's draws.
	r := rand.New(rand.NewPCG(seed, stream*0x9e3779b97f4a7c15+1))
	for range n {
		dst = append(dst, uint16(r.IntN(len(fillerWords))))
	}
	for range pad {
		dst = append(dst, padIndex)
	}
	return dst
}

// shuffle shuffles words as rand.New(p).Shuffle would, draw for draw
// (TestShuffleAsRand): Fisher–Yates with math/rand/v2's bounded draws,
// on the generator itself rather than through an interface and a swap
// function per word, which were a tenth of a predicted level's time.
func shuffle(p *rand.PCG, words []uint16) {
	for i := len(words) - 1; i > 0; i-- {
		n := uint64(i + 1)
		var j uint64
		if n&(n-1) == 0 {
			j = p.Uint64() & (n - 1)
		} else {
			hi, lo := bits.Mul64(p.Uint64(), n)
			if lo < n {
				thresh := -n % n
				for lo < thresh {
					hi, lo = bits.Mul64(p.Uint64(), n)
				}
			}
			j = hi
		}
		words[i], words[j] = words[j], words[i]
	}
}
