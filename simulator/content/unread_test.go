package content

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestUnreadAnswerAsDrawn holds an unread answer (GenRequest.AnswerUnread)
// to the answer drawn from the digest: the same length, end and prompt,
// for prompts of many digests, fixed and ranged answers, max_tokens below,
// at and above them, none, and ignore_eos; and declines, saying exactly
// the drawn answer, where the draw decides the length.
func TestUnreadAnswerAsDrawn(t *testing.T) {
	table, ok := NewWordTable(fillerVocabulary)
	if !ok {
		t.Fatal("the filler vocabulary was refused")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		tokens    string
		maxTokens []int // -1: not set
		ignoreEOS bool
		unread    bool // whether every max_tokens is said unread
	}{
		{"65536", []int{-1, 0, 1, 96, 4096}, false, true},
		{"40", []int{-1, 0, 39, 40, 41, 300}, false, true},
		{"40", []int{-1, 0, 39, 40, 41, 300}, true, true},
		{"[50, 90]", []int{0, 10, 49}, false, true},
		{"[50, 90]", []int{50, 60, 90, 200, -1}, false, false},
		{"[50, 90]", []int{50, 60, 90, 200}, true, true},
	} {
		resp, err := ParseResponses("test", fmt.Appendf(nil, "default:\n  synthetic: {tokens: %s}\n", c.tokens))
		if err != nil {
			t.Fatal(err)
		}
		for _, mt := range c.maxTokens {
			for trial := range 20 {
				words := make([]uint16, 5+r.IntN(60))
				for k := range words {
					words[k] = uint16(r.IntN(len(fillerVocabulary)))
				}
				gen := func(unread bool) *Plan {
					g := &GenRequest{Chat: true, Messages: []Message{{Role: "user"}}, Words: words, Vocab: table,
						WantIDs: true, IgnoreEOS: c.ignoreEOS, AnswerUnread: unread}
					if mt >= 0 {
						g.MaxTokens = &mt
					}
					p, err := resp.Generate(g, 8192)
					if err != nil {
						t.Fatal(err)
					}
					return p
				}
				drawn, unread := gen(false), gen(true)
				where := fmt.Sprintf("tokens %s, max_tokens %d, ignore_eos %v, trial %d", c.tokens, mt, c.ignoreEOS, trial)
				if unread.Unread != c.unread {
					t.Fatalf("%s: said unread %v, want %v", where, unread.Unread, c.unread)
				}
				if !c.unread && !slices.Equal(unread.Tokens, drawn.Tokens) {
					t.Fatalf("%s: declined, yet said %q where the draw says %q", where, unread.Tokens, drawn.Tokens)
				}
				if len(unread.Tokens) != len(drawn.Tokens) || unread.FinishReason != drawn.FinishReason ||
					unread.PromptTokens != drawn.PromptTokens || !slices.Equal(unread.PromptIDs, drawn.PromptIDs) {
					t.Fatalf("%s: unread %d tokens (%s), prompt %d; drawn %d (%s), prompt %d", where,
						len(unread.Tokens), unread.FinishReason, unread.PromptTokens, len(drawn.Tokens), drawn.FinishReason, drawn.PromptTokens)
				}
				if c.unread && slices.ContainsFunc(unread.Tokens, func(s string) bool { return s != UnreadToken }) {
					t.Fatalf("%s: an unread answer holds a word", where)
				}
			}
		}
	}
}
