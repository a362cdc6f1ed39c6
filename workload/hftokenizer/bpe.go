package hftokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// bpe is byte-pair encoding: a word starts as its characters and the
// lowest-ranked adjacent pair in the merge table is joined until none is
// left, exactly as the library's Word::merge_all orders it (rank, then
// position).
type bpe struct {
	vocab        map[string]int
	merges       map[[2]int]mergeRule
	unk          int // −1: none
	prefix       string
	suffix       string
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	// byteIDs are the <0xNN> tokens byte fallback uses (−1: absent).
	byteIDs [256]int
	// cache keeps the ids of words already merged: prose repeats its
	// words, and merging is most of the cost of a word.
	cache wordCache
}

type mergeRule struct{ rank, id int }

func parseBPE(raw json.RawMessage) (*bpe, error) {
	var v struct {
		Dropout      *float64        `json:"dropout"`
		UnkToken     *string         `json:"unk_token"`
		Prefix       *string         `json:"continuing_subword_prefix"`
		Suffix       *string         `json:"end_of_word_suffix"`
		FuseUnk      bool            `json:"fuse_unk"`
		ByteFallback bool            `json:"byte_fallback"`
		IgnoreMerges bool            `json:"ignore_merges"`
		Vocab        json.RawMessage `json:"vocab"`
		Merges       json.RawMessage `json:"merges"`
	}
	if err := strictUnmarshal(raw, &v, "model BPE"); err != nil {
		return nil, err
	}
	if v.Dropout != nil && *v.Dropout != 0 {
		return nil, fmt.Errorf("model BPE: dropout %g makes encoding random; no server counts that way", *v.Dropout)
	}
	vocab, err := parseVocabMap(v.Vocab, "model BPE")
	if err != nil {
		return nil, err
	}
	b := &bpe{vocab: vocab, unk: -1, fuseUnk: v.FuseUnk, byteFallback: v.ByteFallback, ignoreMerges: v.IgnoreMerges}
	if v.Prefix != nil {
		b.prefix = *v.Prefix
	}
	if v.Suffix != nil {
		b.suffix = *v.Suffix
	}
	if v.UnkToken != nil {
		id, ok := vocab[*v.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model BPE: unk_token %q is not in the vocabulary", *v.UnkToken)
		}
		b.unk = id
	}
	for i := range b.byteIDs {
		b.byteIDs[i] = -1
		if id, ok := vocab[fmt.Sprintf("<0x%02X>", i)]; ok {
			b.byteIDs[i] = id
		}
	}
	pairs, err := parseMerges(v.Merges)
	if err != nil {
		return nil, err
	}
	b.merges = make(map[[2]int]mergeRule, len(pairs))
	for rank, p := range pairs {
		a, ok1 := vocab[p[0]]
		c, ok2 := vocab[p[1]]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("model BPE: merge %d (%q %q) names a token not in the vocabulary", rank+1, p[0], p[1])
		}
		if len(b.prefix) > len(p[1]) {
			return nil, fmt.Errorf("model BPE: merge %d (%q %q) is shorter than the subword prefix", rank+1, p[0], p[1])
		}
		joined := p[0] + p[1][len(b.prefix):]
		id, ok := vocab[joined]
		if !ok {
			return nil, fmt.Errorf("model BPE: merge %d gives %q, which is not in the vocabulary", rank+1, joined)
		}
		b.merges[[2]int{a, c}] = mergeRule{rank: rank, id: id}
	}
	return b, nil
}

// parseVocabMap reads a {"token": id} vocabulary.
func parseVocabMap(raw json.RawMessage, what string) (map[string]int, error) {
	if isNull(raw) {
		return nil, fmt.Errorf("%s: missing \"vocab\"", what)
	}
	var vocab map[string]int
	if err := json.Unmarshal(raw, &vocab); err != nil {
		return nil, fmt.Errorf("%s: \"vocab\" must be an object of token ids: %v", what, err)
	}
	for tok, id := range vocab {
		if id < 0 || id > maxID {
			return nil, fmt.Errorf("%s: token %q has id %d, outside 0..%d", what, tok, id, maxID)
		}
	}
	return vocab, nil
}

// parseMerges reads merges as "a b" strings or as [a, b] pairs.
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("model BPE: \"merges\" must be a list: %v", err)
	}
	out := make([][2]string, 0, len(items))
	for i, it := range items {
		var s string
		if err := json.Unmarshal(it, &s); err == nil {
			a, b, ok := strings.Cut(s, " ")
			if !ok || strings.Contains(b, " ") {
				return nil, fmt.Errorf("model BPE: merge %d %q is not two tokens separated by one space", i+1, s)
			}
			out = append(out, [2]string{a, b})
			continue
		}
		var pair []string
		if err := json.Unmarshal(it, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("model BPE: merge %d is neither \"a b\" nor [\"a\", \"b\"]", i+1)
		}
		out = append(out, [2]string{pair[0], pair[1]})
	}
	return out, nil
}

func (b *bpe) tokenID(s string) (int, bool) {
	id, ok := b.vocab[s]
	return id, ok
}

// symbol is one part of a word being merged.
type symbol struct {
	id         int
	prev, next int
	gone       bool
}

func (b *bpe) tokenize(dst []int, word string) []int {
	if b.ignoreMerges {
		if id, ok := b.vocab[word]; ok {
			return append(dst, id)
		}
	}
	if ids, ok := b.cache.get(word); ok {
		return append(dst, ids...)
	}
	syms := b.initial(word)
	b.mergeAll(syms)
	mark := len(dst)
	for _, s := range syms {
		if !s.gone {
			dst = append(dst, s.id)
		}
	}
	b.cache.put(word, dst[mark:])
	return dst
}

// initial is the word's characters as symbols, with byte fallback and
// unknown-token fusing as the library's merge_word does them.
func (b *bpe) initial(word string) []symbol {
	syms := make([]symbol, 0, len(word))
	add := func(id int) {
		n := len(syms)
		syms = append(syms, symbol{id: id, prev: n - 1, next: n + 1})
	}
	pendingUnk := false
	for i, r := range word {
		size := utf8.RuneLen(r)
		if r == utf8.RuneError {
			size = 1
		}
		s := word[i : i+size]
		if i > 0 && b.prefix != "" {
			s = b.prefix + s
		}
		if i+size == len(word) && b.suffix != "" {
			s += b.suffix
		}
		if id, ok := b.vocab[s]; ok {
			if pendingUnk {
				add(b.unk)
				pendingUnk = false
			}
			add(id)
			continue
		}
		if b.byteFallback && b.allBytes(s) {
			// As in the library, a pending unknown token waits for the
			// next character found in the vocabulary: bytes go ahead of it.
			for j := 0; j < len(s); j++ {
				add(b.byteIDs[s[j]])
			}
			continue
		}
		if b.unk < 0 {
			continue
		}
		if pendingUnk && !b.fuseUnk {
			add(b.unk)
		}
		pendingUnk = true
	}
	if pendingUnk {
		add(b.unk)
	}
	if n := len(syms); n > 0 {
		syms[n-1].next = -1
	}
	return syms
}

func (b *bpe) allBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if b.byteIDs[s[i]] < 0 {
			return false
		}
	}
	return true
}

// mergeAll joins pairs in rank order, leftmost first among equal ranks.
func (b *bpe) mergeAll(syms []symbol) {
	if len(syms) < 2 {
		return
	}
	q := make(mergeQueue, 0, len(syms))
	for i := 0; i+1 < len(syms); i++ {
		if m, ok := b.merges[[2]int{syms[i].id, syms[i+1].id}]; ok {
			q.push(queued{pos: i, rank: m.rank, id: m.id})
		}
	}
	for len(q) > 0 {
		top := q.pop()
		cur := &syms[top.pos]
		if cur.gone || cur.next < 0 {
			continue
		}
		right := syms[cur.next]
		if m, ok := b.merges[[2]int{cur.id, right.id}]; !ok || m.id != top.id {
			continue // a stale entry: a neighbour changed since it was queued
		}
		cur.id = top.id
		syms[cur.next].gone = true
		cur.next = right.next
		if right.next >= 0 {
			syms[right.next].prev = top.pos
		}
		if cur.prev >= 0 {
			if m, ok := b.merges[[2]int{syms[cur.prev].id, cur.id}]; ok {
				q.push(queued{pos: cur.prev, rank: m.rank, id: m.id})
			}
		}
		if cur.next >= 0 {
			if m, ok := b.merges[[2]int{cur.id, syms[cur.next].id}]; ok {
				q.push(queued{pos: top.pos, rank: m.rank, id: m.id})
			}
		}
	}
}

type queued struct{ pos, rank, id int }

// mergeQueue is a binary min-heap on (rank, pos).
type mergeQueue []queued

func (a queued) before(b queued) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.pos < b.pos
}

func (q *mergeQueue) push(x queued) {
	h := append(*q, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	*q = h
}

func (q *mergeQueue) pop() queued {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].before(h[m]) {
			m = l
		}
		if r := l + 1; r < n && h[r].before(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// wordCache remembers merged words, up to a bound; it is safe for
// concurrent use.
type wordCache struct {
	mu sync.Mutex
	m  map[string][]int
}

// maxCachedWords bounds the cache (the library keeps 10,000); words past
// it are merged every time.
const maxCachedWords = 50000

func (c *wordCache) get(w string) ([]int, bool) {
	c.mu.Lock()
	ids, ok := c.m[w]
	c.mu.Unlock()
	return ids, ok
}

func (c *wordCache) put(w string, ids []int) {
	if len(w) > 256 {
		return
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string][]int{}
	}
	if len(c.m) < maxCachedWords {
		c.m[strings.Clone(w)] = slices.Clone(ids)
	}
	c.mu.Unlock()
}
