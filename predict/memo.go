package predict

import (
	"math"
	"sync"
	"unsafe"

	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
)

// said is what the content side answered one request: its sizes and the
// core's request built from it (arrival and id unset), or the refusal;
// plan, for a request not kept in a memo, is the whole answer (a call's
// turn carries its text forward).
type said struct {
	// tag and class are the record's turn and mix class.
	tag, maxTokens, class int
	// share is the prompt's share an earlier request sent first (see
	// workload.PrefixTracker), reckoned when the request was first said.
	share          float32
	prompt, output int
	// thinking is how many of the answer's first tokens are thought, and
	// length says the answer was cut at max_tokens.
	thinking int
	length   bool
	reported bool
	// tool is the function the answer calls, when it calls one; inputs
	// a pooling request's inputs (0: a generating request).
	tool   string
	inputs int
	plan   *engine.Plan
	sr     sched.Request
	err    error
	// routeKey is what prefix affinity routes the request by (prefixKey
	// of its ids).
	routeKey uint64
}

// memoBytes bounds a memo: past it, requests are said afresh each time.
const memoBytes = 1 << 30

// Memo keeps what the content side said for each request index of a
// level, for a level predicted many times with the same workload (each
// step of a calibration's search, each configuration and load of a
// plan). What is said depends neither on timing nor on the model (the
// context limit is checked per model when it is sent), so it is the same
// in every prediction. It is safe for concurrent use; the cores only
// read what is kept of the token ids: their full blocks' chained hashes
// (sched.Request.Chain), a sixteenth of the ids. It holds at most about a
// GiB.
//
// Each request is kept compact (kept: 128 bytes and its chain), in pages
// of consecutive indices: an eight-GPU plan keeps 194,000 requests, and
// as said (240 bytes each, and a map entry) they were a fifth of its
// heap.
type Memo struct {
	mu    sync.Mutex
	pages map[int]*memoPage
	bytes int
}

// memoPage holds the requests of memoPageSize consecutive indices.
type memoPage [memoPageSize]kept

const memoPageSize = 512

// kept is what a memo keeps of what was said to one request: said less
// its plan (never kept) and the core's request less what each prediction
// sets (its id, arrival and owner) and its ids (kept as their chain).
type kept struct {
	chain                                                   []uint64
	routeKey                                                uint64
	encoderFLOPs                                            float64
	err                                                     error
	tool                                                    string
	tag, maxTokens, class, prompt, output, thinking, inputs int32
	promptLen, outputLen, chainBlock, priority, adapter     int32
	share                                                   float32
	length, reported, set                                   bool
}

// keep is s compact; ok is false when s cannot be (a figure past int32,
// or ids not turned into a chain).
func keep(s *said) (k kept, ok bool) {
	ints := []int{s.tag, s.maxTokens, s.class, s.prompt, s.output, s.thinking, s.inputs,
		s.sr.PromptLen, s.sr.OutputLen, s.sr.ChainBlock, s.sr.Priority, s.sr.Adapter}
	for _, v := range ints {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return kept{}, false
		}
	}
	if s.sr.IDs != nil || s.plan != nil {
		return kept{}, false
	}
	return kept{chain: s.sr.Chain, routeKey: s.routeKey, encoderFLOPs: s.sr.EncoderFLOPs, err: s.err, tool: s.tool,
		tag: int32(s.tag), maxTokens: int32(s.maxTokens), class: int32(s.class), prompt: int32(s.prompt), output: int32(s.output),
		thinking: int32(s.thinking), inputs: int32(s.inputs), promptLen: int32(s.sr.PromptLen), outputLen: int32(s.sr.OutputLen),
		chainBlock: int32(s.sr.ChainBlock), priority: int32(s.sr.Priority), adapter: int32(s.sr.Adapter),
		share: s.share, length: s.length, reported: s.reported, set: true}, true
}

// said is k as said again.
func (k *kept) said() said {
	return said{tag: int(k.tag), maxTokens: int(k.maxTokens), class: int(k.class), share: k.share, prompt: int(k.prompt), output: int(k.output),
		thinking: int(k.thinking), length: k.length, reported: k.reported, tool: k.tool, inputs: int(k.inputs), err: k.err, routeKey: k.routeKey,
		sr: sched.Request{PromptLen: int(k.promptLen), OutputLen: int(k.outputLen), Chain: k.chain, ChainBlock: int(k.chainBlock),
			EncoderFLOPs: k.encoderFLOPs, Priority: int(k.priority), Adapter: int(k.adapter)}}
}

// get is what was said to request i, when kept.
func (m *Memo) get(i int) (said, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < 0 {
		return said{}, false
	}
	p := m.pages[i/memoPageSize]
	if p == nil || !p[i%memoPageSize].set {
		return said{}, false
	}
	return p[i%memoPageSize].said(), true
}

// put keeps what was said to request i, within memoBytes.
func (m *Memo) put(i int, s *said) {
	k, ok := keep(s)
	if !ok || i < 0 {
		return
	}
	size := int(unsafe.Sizeof(kept{})) + 8*len(s.sr.Chain)
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pages[i/memoPageSize]
	if p == nil {
		size += int(unsafe.Sizeof(memoPage{}))
	}
	if m.bytes+size > memoBytes {
		return
	}
	if m.pages == nil {
		m.pages = map[int]*memoPage{}
	}
	if p == nil {
		p = &memoPage{}
		m.pages[i/memoPageSize] = p
	}
	p[i%memoPageSize] = k
	m.bytes += size
}
