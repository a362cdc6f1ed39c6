package workload

import (
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"strings"
	"sync"
	"unsafe"
)

// prefixBlock is the grain, in bytes of prompt text, at which the tracker
// compares prompts: about 16 tokens, a vLLM block.
const prefixBlock = 64

// maxPrefixBlocks bounds the tracker's memory (about 30 MB); past it no
// new blocks are kept, and later shares may read low.
const maxPrefixBlocks = 1 << 20

// PrefixTracker says what share of each measured request's prompt an
// earlier measured request of the run already sent: the cache hit a
// server that kept every prefix would give it, which a run expects and
// compares with what the server says it cached. It chains a hash over
// blocks of the prompt's text, as a prefix cache chains its blocks, so
// only a shared start counts.
type PrefixTracker struct {
	mu   sync.Mutex
	seed maphash.Seed
	// heads maps a block's chained hash that began a prompt's unseen part
	// to the chained hashes of the blocks after it: a prefix tree of the
	// prompts sent, stored a branch at a time, so a prompt that shares
	// nothing costs one map entry, not one per block. A chained hash is in
	// the tree once at most: as a head, or inside one branch, right after
	// the hash before it.
	heads map[uint64][]uint64
	// lazy maps a head whose branch is not hashed yet to how its prompt
	// is written again (ShareWords): most prompts' heads are never
	// reached again, and a branch is hashed only when one is.
	lazy   map[uint64]lazyBranch
	stored int
	full   bool
	// tools and toolsText are the last tools list seen and its text
	// (every request of a run shares one list).
	tools     *Tool
	toolsText string
	// scratch holds the text ShareWords writes, again the text a waiting
	// branch's prompt is written again in.
	scratch, again []byte
}

// NewPrefixTracker returns a tracker that has seen nothing.
func NewPrefixTracker() *PrefixTracker {
	return &PrefixTracker{seed: maphash.MakeSeed(), heads: map[uint64][]uint64{}, lazy: map[uint64]lazyBranch{}}
}

// Share returns the shared share of req's prompt text and records its
// blocks.
func (t *PrefixTracker) Share(req *Request) float32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The tools come first: a chat template renders them before the
	// messages, where every request that offers them shares them.
	text := t.toolsOf(req.Tools) + promptText(req)
	return t.share(&prompt{b: unsafe.Slice(unsafe.StringData(text), len(text)), size: len(text), closed: true}, nil)
}

// share is Share of the text p writes, the lock held; again, when set,
// says how to write it again, so its unseen part's hashes may wait.
func (t *PrefixTracker) share(p *prompt, again *lazyBranch) float32 {
	if p.size == 0 {
		return 0
	}
	var h maphash.Hash
	h.SetSeed(t.seed)
	shared := 0
	// branch is the branch the walk follows, next its next hash's index.
	var branch []uint64
	next := 0
	for end := prefixBlock; end <= p.size; end += prefixBlock {
		h.Write(p.upTo(end)[end-prefixBlock:])
		sum := h.Sum64()
		if next < len(branch) && branch[next] == sum {
			next++
		} else if b, ok := t.branchOf(sum); ok {
			branch, next = b, 0
		} else {
			t.store(sum, &h, p, end, again)
			break
		}
		shared = end
	}
	return float32(shared) / float32(p.size)
}

// store adds the branch from head, which ends at headEnd in p's text:
// head, and the chained hashes of the text's whole blocks after it,
// continuing h, or how to write the text again to find them later.
func (t *PrefixTracker) store(head uint64, h *maphash.Hash, p *prompt, headEnd int, again *lazyBranch) {
	n := (p.size - headEnd) / prefixBlock
	if t.stored+1+n > maxPrefixBlocks {
		t.full = true
		return
	}
	t.stored += 1 + n
	if again != nil {
		lb := *again
		lb.headEnd = headEnd
		t.lazy[head] = lb
		return
	}
	t.heads[head] = branchAfter(h, p.upTo(p.size), headEnd)
}

// branchAfter is the chained hashes of text's whole blocks from headEnd
// on, continuing h (which has hashed text up to headEnd).
func branchAfter(h *maphash.Hash, text []byte, headEnd int) []uint64 {
	branch := make([]uint64, (len(text)-headEnd)/prefixBlock)
	for i := range branch {
		from := headEnd + i*prefixBlock
		h.Write(text[from : from+prefixBlock])
		branch[i] = h.Sum64()
	}
	return branch
}

// toolsOf is the text of a tools list, kept for the next request that
// offers the same list.
func (t *PrefixTracker) toolsOf(tools []Tool) string {
	if len(tools) == 0 {
		return ""
	}
	if &tools[0] != t.tools {
		b, _ := json.Marshal(tools)
		t.tools, t.toolsText = &tools[0], string(b)
	}
	return t.toolsText
}

// imageStandIn is the bytes an image stands for in the tracked text:
// some 256 tokens' worth (Gemma 3's and LLaVA's fixed count, Qwen2-VL's
// for 448×448), since the client cannot know the server's rule. Its
// content is drawn from the image's, so the same image is the same
// prefix, as a server's multimodal hash makes it.
const imageStandIn = 1024

// promptText is the request as one string, roles included, so prompts
// that differ only in who says what do not match; a message's images
// follow its text, as knee sends them.
func promptText(req *Request) string {
	if len(req.Inputs) > 0 {
		return strings.Join(req.Inputs, "\x00")
	}
	if len(req.Messages) == 0 {
		return req.Prompt
	}
	n := 0
	for _, m := range req.Messages {
		n += len(m.Role) + len(m.Content) + 2 + len(m.Images)*imageStandIn
	}
	b := make([]byte, 0, n)
	for _, m := range req.Messages {
		b = append(b, m.Role...)
		b = append(b, 0)
		b = append(b, m.Content...)
		for _, u := range m.Images {
			b = appendStandIn(b, u)
		}
		b = append(b, 1)
	}
	return string(b)
}

// standInSeed makes image stand-ins the same across trackers.
var standInSeed = maphash.MakeSeed()

// appendStandIn appends imageStandIn bytes drawn from the image's URL.
func appendStandIn(b []byte, url string) []byte {
	x := maphash.String(standInSeed, url) | 1
	for range imageStandIn / 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}

// Full reports whether the tracker stopped keeping new blocks (past
// about 30 MB of them), so later shares may read low.
func (t *PrefixTracker) Full() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.full
}
