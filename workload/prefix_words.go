package workload

import (
	"hash/maphash"
	"slices"
)

// wordChunk is how many words a prompt said as words has written at a
// time as the tracker's walk reads on: a block is some 64 bytes, ten or
// so words, and most prompts' walks stop at their first.
const wordChunk = 16

// prompt is a prompt's text as the tracker reads it: all of it (Share),
// or written as far as the walk has read (ShareWords): the tools' text,
// the role, a zero byte, the words spaced, and a closing byte.
type prompt struct {
	b       []byte
	words   []uint16 // the words not written yet
	started bool     // whether a word is written
	closed  bool     // whether the closing byte is written
	size    int      // the whole text's length
}

// wordsPrompt is the prompt of one message of words, its text not yet
// written past its role; it writes into buf.
func wordsPrompt(buf []byte, tools, role string, words []uint16) prompt {
	b := append(append(append(buf[:0], tools...), role...), 0)
	return prompt{b: b, words: words, size: len(b) + textSize(words) + 1}
}

// upTo returns the text's first n bytes (n at most its size), writing
// words until it holds them.
func (p *prompt) upTo(n int) []byte {
	for len(p.b) < n && !p.closed {
		p.write()
	}
	return p.b[:n]
}

// write writes the next wordChunk words, or the closing byte after the
// last.
func (p *prompt) write() {
	if len(p.words) == 0 {
		p.b, p.closed = append(p.b, 1), true
		return
	}
	chunk := p.words[:min(len(p.words), wordChunk)]
	p.words = p.words[len(chunk):]
	if !p.started {
		p.b, p.started = appendWordsText(p.b, chunk), true
		return
	}
	// Each word after a space, the first's included.
	n, size := len(p.b), textSize(chunk)+1
	p.b = slices.Grow(p.b, size+packedSlack)[:n+size+packedSlack]
	putWords(p.b, n, chunk)
	p.b = p.b[:n+size]
}

// lazyBranch is how a prompt said as words is written again: its
// source's request at index (the same words every time), after tools
// and role; headEnd is where its head block ends in the text.
type lazyBranch struct {
	src         WordSource
	index       int
	tools, role string
	headEnd     int
}

// ShareWords is Share of req, the request src says at index: one message
// whose text is words (Synthetic.RequestWords) and whose Content is
// empty. The same share, read from words written only as far as the
// walk reads them; the blocks after where the prompt parts from every
// earlier one are hashed only if a later prompt reaches that block, by
// saying src's request at index again.
func (t *PrefixTracker) ShareWords(req *Request, words []uint16, src WordSource, index int) float32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(req.Inputs) > 0 || len(req.Messages) != 1 || req.Messages[0].Content != "" || len(req.Messages[0].Images) > 0 {
		panic("workload: ShareWords of a request that is not one message of words")
	}
	tools, role := t.toolsOf(req.Tools), req.Messages[0].Role
	p := wordsPrompt(t.scratch, tools, role, words)
	share := t.share(&p, &lazyBranch{src: src, index: index, tools: tools, role: role})
	t.scratch = p.b[:0]
	return share
}

// branchOf is the branch whose head is sum, hashed now if it waited.
func (t *PrefixTracker) branchOf(sum uint64) ([]uint64, bool) {
	if b, ok := t.heads[sum]; ok {
		return b, true
	}
	lb, ok := t.lazy[sum]
	if !ok {
		return nil, false
	}
	delete(t.lazy, sum)
	b := t.hashAgain(lb, sum)
	t.heads[sum] = b
	return b, true
}

// hashAgain is the branch after head of the prompt lb writes again: the
// chained hashes of its whole blocks after the head's end. A source that
// said other words the second time (none does: a Source is
// deterministic) gets an empty branch.
func (t *PrefixTracker) hashAgain(lb lazyBranch, head uint64) []uint64 {
	req, words, ok := lb.src.RequestWords(lb.index, nil)
	if !ok || len(req.Messages) != 1 {
		return nil
	}
	p := wordsPrompt(t.again, lb.tools, lb.role, words)
	defer func() { t.again = p.b[:0] }()
	text := p.upTo(p.size)
	var h maphash.Hash
	h.SetSeed(t.seed)
	h.Write(text[:lb.headEnd])
	if h.Sum64() != head {
		return nil
	}
	return branchAfter(&h, text, lb.headEnd)
}
