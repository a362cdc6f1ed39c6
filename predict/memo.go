package predict

import (
	"sync"

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
type Memo struct {
	mu    sync.Mutex
	m     map[int]*said
	bytes int
}

func (m *Memo) get(i int) *said {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[i]
}

func (m *Memo) put(i int, s *said) {
	size := 128 + 8*len(s.sr.IDs) + 8*len(s.sr.Chain)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bytes+size > memoBytes {
		return
	}
	if m.m == nil {
		m.m = map[int]*said{}
	}
	m.m[i] = s
	m.bytes += size
}
