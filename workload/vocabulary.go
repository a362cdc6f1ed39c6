package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Vocabulary is the filler words with what each costs under one model's
// tokenizer, so a synthetic prompt can hold an exact number of tokens
// without the tokenizer running for every request (it counts about 3 MB/s,
// some 3 ms for a prompt of 2,048 tokens: too slow for an open loop's
// sender). It holds only when the tokenizer counts a text of filler words
// word by word, which NewVocabulary checks.
type Vocabulary struct {
	words []string
	// first is what a word costs opening a text, rest what it costs after
	// a space.
	first, rest []int
	// small lists the words that cost at most maxSmall tokens after a
	// space, by cost, to fill what is left of a prompt exactly.
	small [maxSmall + 1][]int
}

// maxSmall is the largest remainder filled by choosing a word of its
// exact cost.
const maxSmall = 8

// NewVocabulary measures every filler word with count and checks, on
// texts drawn as prompts are, that a text costs the sum of its words. It
// fails when the tokenizer merges across words (so counts do not add up)
// or no word costs a single token after a space (so a remainder of one
// could not be filled); prompts are then sized by fitting instead.
func NewVocabulary(count TokenCounter) (*Vocabulary, error) {
	v := &Vocabulary{}
	// A word's cost after a space is measured behind an anchor word: a
	// SentencePiece tokenizer counts a text's leading space on its own.
	anchor := count.Count("x")
	for _, w := range fillerWords {
		first, rest := count.Count(w), count.Count("x "+w)-anchor
		if first < 1 || rest < 1 {
			continue
		}
		k := len(v.words)
		v.words, v.first, v.rest = append(v.words, w), append(v.first, first), append(v.rest, rest)
		if rest <= maxSmall {
			v.small[rest] = append(v.small[rest], k)
		}
	}
	if len(v.small[1]) == 0 {
		return nil, fmt.Errorf("no filler word is a single token after a space under this tokenizer, so a prompt's last token could not be placed exactly")
	}
	for seed := uint64(1); seed <= 8; seed++ {
		for _, n := range []int{1, 7, 64, 333} {
			text, cost := v.Text(n, seed, 0, false)
			if got := count.Count(text); got != cost || cost != n {
				return nil, fmt.Errorf("the tokenizer counts %d tokens in a text of filler words costing %d (of %d asked) word by word: its counts do not add up", got, cost, n)
			}
			if text, cost = v.Text(n, seed, 1, true); count.Count("x"+text)-count.Count("x") != cost {
				return nil, fmt.Errorf("the tokenizer does not count filler words after a prefix word by word")
			}
		}
	}
	return v, nil
}

// Text returns filler words costing tokens tokens, drawn from a generator
// seeded by (seed, stream), and their cost. A continuation follows other
// text (after a space of its own, which it begins with) so that its first
// word costs what it does after a space. The cost falls short of tokens
// only when nothing small enough is left to place, which NewVocabulary
// rules out.
func (v *Vocabulary) Text(tokens int, seed, stream uint64, continuation bool) (string, int) {
	r := rand.New(rand.NewPCG(seed, stream*0x9e3779b97f4a7c15+1))
	var b strings.Builder
	b.Grow(tokens * 5)
	cost := 0
	for cost < tokens {
		left := tokens - cost
		k := r.IntN(len(v.words))
		c := v.rest[k]
		opening := b.Len() == 0 && !continuation
		if opening {
			c = v.first[k]
		}
		if c > left {
			if k, c = v.fit(r, left, opening); c == 0 {
				break
			}
		}
		if !opening {
			b.WriteByte(' ')
		}
		b.WriteString(v.words[k])
		cost += c
	}
	return b.String(), cost
}

// fit draws a word costing exactly left tokens, or failing that the most
// it can place, from the small words: 0 when none fits.
func (v *Vocabulary) fit(r *rand.Rand, left int, opening bool) (int, int) {
	for c := min(left, maxSmall); c >= 1; c-- {
		var picks []int
		for _, k := range v.small[c] {
			if !opening || v.first[k] == c {
				picks = append(picks, k)
			}
		}
		if len(picks) > 0 {
			return picks[r.IntN(len(picks))], c
		}
	}
	return 0, 0
}
