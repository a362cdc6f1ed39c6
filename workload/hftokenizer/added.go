package hftokenizer

import (
	"unicode"
	"unicode/utf8"
)

// addedToken is one entry of tokenizer.json's added_tokens.
type addedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// addedVocab finds added tokens in text: those marked normalized in the
// normalized text, the others in the raw text, each as one id, as the
// library's AddedVocabulary does.
type addedVocab struct {
	raw, normalized *matcher
}

// segment is a run of text that is either one added token (id ≥ 0) or
// ordinary text for the pre-tokenizer and the model (id −1).
type segment struct {
	text    string
	id      int
	atStart bool
}

// newAddedVocab builds the two matchers. Token contents that the
// normalizer changes are matched in their normalized form.
func newAddedVocab(tokens []addedToken, norm normalizer, m model) *addedVocab {
	av := &addedVocab{}
	for _, t := range tokens {
		if t.Content == "" {
			continue
		}
		id := t.ID
		if vid, ok := m.tokenID(t.Content); ok {
			id = vid
		}
		if t.Normalized {
			content := t.Content
			if norm != nil {
				content = norm.normalize(content)
			}
			if content == "" {
				continue
			}
			if av.normalized == nil {
				av.normalized = newMatcher()
			}
			av.normalized.add(content, t, id)
		} else {
			if av.raw == nil {
				av.raw = newMatcher()
			}
			av.raw.add(t.Content, t, id)
		}
	}
	return av
}

// split cuts text at raw added tokens, normalizes what lies between them,
// and cuts that at normalized added tokens. Empty runs are dropped.
func (av *addedVocab) split(text string, atStart bool, norm normalizer) []segment {
	var out []segment
	for _, s := range av.raw.find(text, atStart) {
		if s.id >= 0 {
			out = append(out, s)
			continue
		}
		t := s.text
		if norm != nil {
			t = norm.normalize(t)
		}
		for _, n := range av.normalized.find(t, s.atStart) {
			if n.text != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// matcher is a byte trie of token contents, searched leftmost-longest.
type matcher struct {
	nodes []trieNode
	toks  []matchedToken
	first [256]bool
}

type trieNode struct {
	next  map[byte]int32
	token int32 // index into toks, or −1
}

type matchedToken struct {
	tok addedToken
	id  int
}

func newMatcher() *matcher {
	return &matcher{nodes: []trieNode{{token: -1}}}
}

// add inserts content; a later duplicate replaces an earlier one.
func (m *matcher) add(content string, t addedToken, id int) {
	m.first[content[0]] = true
	n := int32(0)
	for i := 0; i < len(content); i++ {
		c := content[i]
		nx, ok := m.nodes[n].next[c]
		if !ok {
			if m.nodes[n].next == nil {
				m.nodes[n].next = map[byte]int32{}
			}
			m.nodes = append(m.nodes, trieNode{token: -1})
			nx = int32(len(m.nodes) - 1)
			m.nodes[n].next[c] = nx
		}
		n = nx
	}
	m.nodes[n].token = int32(len(m.toks))
	m.toks = append(m.toks, matchedToken{tok: t, id: id})
}

// longest returns the end of the longest token starting at i, and which.
func (m *matcher) longest(s string, i int) (end int, tok int32) {
	n, end, tok := int32(0), -1, int32(-1)
	for j := i; j < len(s); j++ {
		nx, ok := m.nodes[n].next[s[j]]
		if !ok {
			break
		}
		n = nx
		if m.nodes[n].token >= 0 {
			end, tok = j+1, m.nodes[n].token
		}
	}
	return end, tok
}

// find cuts s into runs of text and added tokens, applying each token's
// single_word, lstrip and rstrip rules as the library does. Like its
// Aho-Corasick iterator, the search resumes after a match's own end, even
// when the token was skipped (single_word) or took spaces after it (rstrip).
func (m *matcher) find(s string, atStart bool) []segment {
	if m == nil || s == "" {
		return []segment{{text: s, id: -1, atStart: atStart}}
	}
	toks := m.toks
	var out []segment
	offset := 0 // end of the last token taken
	for i := 0; i < len(s); {
		if !m.first[s[i]] {
			i++
			continue
		}
		end, ti := m.longest(s, i)
		if ti < 0 {
			i++
			continue
		}
		mt := toks[ti]
		start, stop := i, end
		i = end
		if mt.tok.SingleWord && (endsWithWord(s[:start]) || startsWithWord(s[stop:])) {
			continue
		}
		if mt.tok.LStrip {
			start = max(trailingSpaceStart(s[:start]), offset)
		}
		if mt.tok.RStrip {
			stop += leadingSpaceLen(s[stop:])
		}
		if offset < start {
			out = append(out, segment{text: s[offset:start], id: -1, atStart: atStart && offset == 0})
		}
		out = append(out, segment{text: s[start:stop], id: mt.id})
		offset = stop
	}
	if offset < len(s) {
		out = append(out, segment{text: s[offset:], id: -1, atStart: atStart && offset == 0})
	}
	return out
}

// isWordChar is the regex crate's Unicode \w.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) ||
		unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) || unicode.Is(unicode.Join_Control, r)
}

func endsWithWord(s string) bool {
	r, size := utf8.DecodeLastRuneInString(s)
	return size > 0 && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	return size > 0 && isWordChar(r)
}

// trailingSpaceStart is where the whitespace at the end of s begins.
func trailingSpaceStart(s string) int {
	i := len(s)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(r) {
			break
		}
		i -= size
	}
	return i
}

// leadingSpaceLen is the length of the whitespace that starts s.
func leadingSpaceLen(s string) int {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}
