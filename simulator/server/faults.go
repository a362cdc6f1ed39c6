package server

import (
	"hash/fnv"
	"sync"
)

// faultKindOf reads an X-Knee-Fault value: a kind, or the bare status the
// docs use for the error kinds (429, 500, 503, 401).
func faultKindOf(header string) (string, bool) {
	switch header {
	case "429", "500", "503", "401":
		return "error_" + header, true
	}
	return header, ValidKind(header)
}

// faults holds a model's current fault spec; /admin/faults replaces it at
// run time.
type faults struct {
	mu   sync.RWMutex
	spec FaultSpec
	// seen counts how often each request content arrived, so a retry of
	// the same request gets a fresh (but still repeatable) draw.
	seenMu sync.Mutex
	seen   map[uint64]uint32
}

// occurrence returns how many times content was seen before.
func (f *faults) occurrence(content string) uint32 {
	h := fnv.New64a()
	h.Write([]byte(content))
	k := h.Sum64()
	f.seenMu.Lock()
	defer f.seenMu.Unlock()
	if f.seen == nil || len(f.seen) > 1<<20 {
		f.seen = map[uint64]uint32{}
	}
	n := f.seen[k]
	f.seen[k] = n + 1
	return n
}

func (f *faults) get() FaultSpec {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.spec
}

func (f *faults) set(s FaultSpec) {
	f.mu.Lock()
	f.spec = s
	f.mu.Unlock()
}
