package workload

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestRequestWordsSpellTheRequest holds a synthetic request said as words
// to its text as first written (Filler's fresh draws for a short text,
// the in-line bag draws for a long one, the pool's prefix then a space),
// through short and long texts, padding, a nonce, a spread and a prefix
// pool, and checks a request whose text is not filler words declines.
func TestRequestWordsSpellTheRequest(t *testing.T) {
	reference := func(s Synthetic, i int) string {
		in, _ := s.Lengths(i)
		seed := s.Seed ^ hashString(s.Nonce)
		own := func(tokens int, wpt float64, bagSeed, seed, stream uint64, pad int) string {
			if n := wordsFor(tokens, wpt); n >= BagFrom {
				return baggedInLine(n, bagSeed, seed, stream, pad)
			}
			return Filler(tokens, wpt, seed, stream) + strings.Repeat(" "+PadWord, pad)
		}
		text := own(in, s.WordsPerToken, s.Seed, seed, uint64(i), s.Pad)
		if s.Prefix.Tokens > 0 {
			k := s.Prefix.Of(s.Seed, i)
			text = own(s.Prefix.Tokens, s.prefixWords(), s.Seed^0x9001, seed^0x9001, 0x9001_0000_0000+uint64(k), 0) + " " + text
		}
		return text
	}
	for _, s := range []Synthetic{
		{Tokens: 5, MaxTokens: 3, Seed: 1},
		{Tokens: 15, MaxTokens: 3, Seed: 2, Pad: 2},
		{Tokens: 1000, MaxTokens: 200, Seed: 3},
		{Tokens: 600, MaxTokens: 20, Seed: 4, Pad: 3, WordsPerToken: 0.8, Nonce: "run-7"},
		{Tokens: 300, MaxTokens: 20, Seed: 5, Spread: Spread{InputStddev: 200}},
		{Tokens: 200, MaxTokens: 20, Seed: 6, Prefix: Pool{Tokens: 500, Count: 4}},
		{Tokens: 8, MaxTokens: 20, Seed: 7, Prefix: Pool{Tokens: 10, Count: 2, WordsPerToken: 1.3}},
	} {
		var buf []uint16
		for i := range 12 {
			req, words, ok := s.RequestWords(i, buf[:0])
			if !ok || len(req.Messages) != 1 || req.Messages[0].Content != "" {
				t.Fatalf("%+v, request %d: said as words %v, %+v", s, i, ok, req)
			}
			want := reference(s, i)
			if got := WordText(words); got != want {
				t.Fatalf("%+v, request %d: the words spell\n%.120q\nnot\n%.120q", s, i, got, want)
			}
			if got := s.Request(i).Messages[0].Content; got != want {
				t.Fatalf("%+v, request %d: the text is\n%.120q\nnot\n%.120q", s, i, got, want)
			}
			buf = words
		}
	}
	if _, _, ok := (Synthetic{Tokens: 10, Vocabulary: &Vocabulary{}}).RequestWords(0, nil); ok {
		t.Error("a vocabulary's text was said as filler words")
	}
}

// TestShareWordsAsShare holds a tracker fed requests as words to one fed
// their text: the same shares, request by request, through a prefix pool
// (shares well above zero), padding, a tools list, prompts sent again
// (whose branches waited to be hashed until then), and a tracker fed
// both ways in turn, as a mix of sources feeds it.
func TestShareWordsAsShare(t *testing.T) {
	s := Synthetic{Tokens: 300, MaxTokens: 20, Seed: 9, Pad: 1, Prefix: Pool{Tokens: 700, Count: 3},
		Spread: Spread{InputStddev: 100}}
	tools := []Tool{{Name: "lookup", Description: "finds a thing"}}
	byText, byWords, byTurns := NewPrefixTracker(), NewPrefixTracker(), NewPrefixTracker()
	var buf []uint16
	positive, whole := 0, 0
	for k := range 60 {
		// Requests 0 to 39, then twenty of them again.
		i := k
		if k >= 40 {
			i = (k * 7) % 40
		}
		text := s.Request(i)
		req, words, _ := s.RequestWords(i, buf[:0])
		if i%2 == 1 {
			text.Tools, req.Tools = tools, tools
		}
		want, got := byText.Share(&text), byWords.ShareWords(&req, words, s, i)
		if got != want {
			t.Fatalf("request %d (%d): %v shared as words, %v as text", k, i, got, want)
		}
		var mixed float32
		if k%3 == 0 {
			mixed = byTurns.Share(&text)
		} else {
			mixed = byTurns.ShareWords(&req, words, s, i)
		}
		if mixed != want {
			t.Fatalf("request %d (%d): %v shared fed both ways, %v as text", k, i, mixed, want)
		}
		if want > 0.5 {
			positive++
		}
		if want > 0.9 && k >= 40 {
			whole++
		}
		buf = words
	}
	if positive < 40 || whole < 15 {
		t.Errorf("%d of 60 requests shared most of their prompt, %d of 20 sent again nearly all: the pool's prefixes or the repeats went unseen", positive, whole)
	}
}

// TestShuffleAsRand holds shuffle to math/rand/v2's Shuffle: the same
// order, and the generator left in the same state, for lengths up to past
// a power of two and many seeds.
func TestShuffleAsRand(t *testing.T) {
	for seed := range uint64(200) {
		n := int(seed*7) % 1100
		mine, theirs := make([]uint16, n), make([]uint16, n)
		for k := range mine {
			mine[k], theirs[k] = uint16(k), uint16(k)
		}
		p, q := rand.NewPCG(seed, 3), rand.NewPCG(seed, 3)
		shuffle(p, mine)
		rand.New(q).Shuffle(n, func(a, b int) { theirs[a], theirs[b] = theirs[b], theirs[a] })
		if !slices.Equal(mine, theirs) || p.Uint64() != q.Uint64() {
			t.Fatalf("seed %d, %d words: the shuffles differ", seed, n)
		}
	}
}
