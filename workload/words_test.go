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
// (shares well above zero), padding and a tools list.
func TestShareWordsAsShare(t *testing.T) {
	s := Synthetic{Tokens: 300, MaxTokens: 20, Seed: 9, Pad: 1, Prefix: Pool{Tokens: 700, Count: 3}}
	tools := []Tool{{Name: "lookup", Description: "finds a thing"}}
	byText, byWords := NewPrefixTracker(), NewPrefixTracker()
	var buf []uint16
	positive := 0
	for i := range 40 {
		text := s.Request(i)
		req, words, _ := s.RequestWords(i, buf[:0])
		if i%2 == 1 {
			text.Tools, req.Tools = tools, tools
		}
		want, got := byText.Share(&text), byWords.ShareWords(&req, words)
		if got != want {
			t.Fatalf("request %d: %v shared as words, %v as text", i, got, want)
		}
		if want > 0.5 {
			positive++
		}
		buf = words
	}
	if positive < 30 {
		t.Errorf("only %d of 40 requests shared most of their prompt: the pool's prefixes went unseen", positive)
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
