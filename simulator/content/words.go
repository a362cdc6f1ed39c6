package content

import (
	"slices"
	"strings"
)

// WordTable holds what the simulator derives from a vocabulary's words,
// so that a text made of them (the words joined by single spaces) is
// tokenised and hashed a word at a time, without its bytes being written
// or read: a predicted level says thousands of long synthetic prompts,
// and writing, tokenising and hashing their text was most of its cost.
// The ids and hashes are those of the written text exactly
// (TestWordTableMatchesText).
type WordTable struct {
	words []string
	// first and spaced are each word's token ids at the text's start and
	// after a space; one holds them flat when every word is one token.
	first, spaced [][]uint64
	one           []uint64
	// fnvTable is the table of FNV-1a steps over each spaced word.
	fnvTable
}

// NewWordTable builds the table of words, none empty and none holding
// white space, or reports which one is not fit.
func NewWordTable(words []string) (*WordTable, bool) {
	t := &WordTable{words: words, first: make([][]uint64, len(words)), spaced: make([][]uint64, len(words)),
		fnvTable: newFNVTable(len(words))}
	single := true
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n\r\v\f") {
			return nil, false
		}
		t.first[i] = AppendTokenIDs(nil, w)
		t.spaced[i] = AppendTokenIDs(nil, " "+w)
		single = single && len(t.spaced[i]) == 1
		t.fnvTable.put(i, " "+w)
	}
	if single {
		t.one = make([]uint64, len(words))
		for i := range words {
			t.one[i] = t.spaced[i][0]
		}
	}
	return t, true
}

// Text writes words out: the text they stand for.
func (t *WordTable) Text(words []uint16) string {
	var b strings.Builder
	for k, w := range words {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.words[w])
	}
	return b.String()
}

// AppendIDs appends the token ids of the text words stand for, as
// AppendTokenIDs would of the text.
func (t *WordTable) AppendIDs(dst []uint64, words []uint16) []uint64 {
	if len(words) == 0 {
		return dst
	}
	dst = append(dst, t.first[words[0]]...)
	if t.one != nil {
		for _, w := range words[1:] {
			dst = append(dst, t.one[w])
		}
		return dst
	}
	for _, w := range words[1:] {
		dst = append(dst, t.spaced[w]...)
	}
	return dst
}

// Count is how many tokens the text words stand for holds.
func (t *WordTable) Count(words []uint16) int {
	if len(words) == 0 {
		return 0
	}
	if t.one != nil {
		return len(t.first[words[0]]) + len(words) - 1
	}
	n := len(t.first[words[0]])
	for _, w := range words[1:] {
		n += len(t.spaced[w])
	}
	return n
}

// fnv continues FNV-1a hash h over the text words stand for.
func (t *WordTable) fnv(h uint64, words []uint16) uint64 {
	if len(words) == 0 {
		return h
	}
	return t.fnvTable.over(fnvString(h, t.words[words[0]]), words[1:])
}

// saysWithoutText reports whether the responder's answer to a prompt
// needs nothing of its text but its digest: no entry to match it, and a
// synthetic default with no thought or call to render from it.
func (r *Responder) saysWithoutText() bool {
	return len(r.entries) == 0 && r.def.synthetic && r.def.think == nil && r.def.callArgs == nil
}

// spelled is g with its words written out as text.
func (g *GenRequest) spelled() *GenRequest {
	c := *g
	c.Vocab, c.Words = nil, nil
	text := g.Vocab.Text(g.Words)
	if !c.Chat {
		c.Prompt = text
		return &c
	}
	c.Messages = append([]Message(nil), g.Messages...)
	c.Messages[len(c.Messages)-1].Text = text
	return &c
}

// wordPromptTokens is PromptTokens of a prompt whose last text is words.
// Its ids leave room for answer more.
func wordPromptTokens(g *GenRequest, answer int) (int, []uint64) {
	if !g.Chat {
		if !g.WantIDs {
			return g.Vocab.Count(g.Words), nil
		}
		ids := g.Vocab.AppendIDs(slices.Grow(g.IDs[:0], len(g.Words)+answer), g.Words)
		return len(ids), ids
	}
	last := len(g.Messages) - 1
	if !g.WantIDs {
		n := replyPrimer
		for _, m := range g.Messages[:last] {
			n += chatOverhead + CountTokens(m.Text)
		}
		return n + chatOverhead + g.Vocab.Count(g.Words), nil
	}
	size := replyPrimer + chatOverhead + len(g.Words) + answer
	for _, m := range g.Messages[:last] {
		size += chatOverhead + len(m.Text)/3
	}
	ids := slices.Grow(g.IDs[:0], size)
	for k, m := range g.Messages {
		ids = append(ids, idStart, TokenID(m.Role), idNewline)
		if k == last {
			ids = g.Vocab.AppendIDs(ids, g.Words)
		} else {
			ids = g.Known.appendIDs(ids, m.Text)
		}
		ids = append(ids, idEnd)
	}
	ids = append(ids, idStart, idAssistant, idNewline)
	return len(ids), ids
}
