package content

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// oddWords are words the tokenizer does not take as one ASCII word each:
// punctuation, digits, non-ASCII letters, a word of several tokens.
var oddWords = []string{"don't", "naïve", "x1", "3.14", "foo-bar", "über", "a", "I", "ok!", "日本語"}

// TestWordTableMatchesText holds the table to the text its words stand
// for: the same token ids and count as tokenising the text, and the same
// FNV-1a hash as hashing its bytes, for random texts of plain and odd
// words, from every kind of hash before them.
func TestWordTableMatchesText(t *testing.T) {
	for _, vocab := range [][]string{fillerVocabulary, append(append([]string(nil), fillerVocabulary...), oddWords...), oddWords} {
		table, ok := NewWordTable(vocab)
		if !ok {
			t.Fatal("a vocabulary of plain words was refused")
		}
		r := rand.New(rand.NewPCG(1, uint64(len(vocab))))
		for trial := range 300 {
			words := make([]uint16, r.IntN(40))
			for k := range words {
				words[k] = uint16(r.IntN(len(vocab)))
			}
			text := table.Text(words)
			if got, want := table.AppendIDs([]uint64{7}, words), AppendTokenIDs([]uint64{7}, text); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, %q: ids %v, tokenising gives %v", trial, text, got, want)
			}
			if got, want := table.Count(words), CountTokens(text); got != want {
				t.Fatalf("trial %d, %q: %d tokens, counting gives %d", trial, text, got, want)
			}
			h := r.Uint64()
			if got, want := table.fnv(h, words), fnvString(h, text); got != want {
				t.Fatalf("trial %d, %q: hash %x, FNV-1a over the text gives %x", trial, text, got, want)
			}
		}
	}
	for _, bad := range []string{"", "two words", "tab\there"} {
		if _, ok := NewWordTable([]string{"fine", bad}); ok {
			t.Errorf("the word %q was taken", bad)
		}
	}
}

// TestGenerateFromWords holds a plan said from words to the one said from
// their text: chat and completion, with and without max_tokens, seed and
// ignore_eos, under a synthetic default (said from the words) and under
// the built-in responses (whose entries match the text, spelled out).
func TestGenerateFromWords(t *testing.T) {
	table, _ := NewWordTable(append(append([]string(nil), fillerVocabulary...), "hello", "explain"))
	plain, err := ParseResponses("test", []byte("default:\n  synthetic: {tokens: [5, 300]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !plain.saysWithoutText() {
		t.Fatal("a synthetic default is spelled out")
	}
	r := rand.New(rand.NewPCG(2, 3))
	for _, resp := range []*Responder{plain, builtinResponses(t, "responses")} {
		for trial := range 60 {
			words := make([]uint16, 1+r.IntN(200))
			for k := range words {
				words[k] = uint16(r.IntN(len(table.words)))
			}
			g := GenRequest{Model: "m", Chat: trial%3 != 0, WantIDs: trial%5 != 0, IgnoreEOS: trial%4 == 0}
			if trial%2 == 0 {
				n := 1 + r.IntN(100)
				g.MaxTokens = &n
			}
			if trial%7 == 0 {
				s := int64(trial)
				g.Seed = &s
			}
			text := g
			if g.Chat {
				text.Messages = []Message{{Role: "system", Text: "be brief"}, {Role: "user", Text: table.Text(words)}}
				g.Messages = []Message{{Role: "system", Text: "be brief"}, {Role: "user"}}
			} else {
				text.Prompt = table.Text(words)
			}
			g.Words, g.Vocab = words, table
			want, werr := resp.Generate(&text, 1<<20)
			got, gerr := resp.Generate(&g, 1<<20)
			if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d: from words %+v (%v), from the text %+v (%v)", trial, got, gerr, want, werr)
			}
			if g.WantIDs && resp == plain && cap(got.PromptIDs) < len(got.PromptIDs)+len(got.Tokens) {
				t.Fatalf("trial %d: room for %d ids after the prompt's, the answer has %d", trial, cap(got.PromptIDs)-len(got.PromptIDs), len(got.Tokens))
			}
		}
	}
}
