package predict

import (
	"sync"

	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
)

// said is what the content side answered one request: its plan and the
// core's request built from it (arrival and id unset), or the refusal.
type said struct {
	tag, maxTokens int
	// share is the prompt's share an earlier request sent first (see
	// workload.PrefixTracker), reckoned when the request was first said.
	share float32
	plan  *engine.Plan
	sr    sched.Request
	err   error
}

// Memo keeps what the content side said for each request index of one
// level, so a level replayed many times (each step of a calibration's
// search) draws and tokenises each prompt once. What is said does not
// depend on timing, so it is the same in every replay. It is safe for
// concurrent use; the core only reads the kept token ids.
type Memo struct {
	mu sync.Mutex
	m  map[int]*said
}

func (m *Memo) get(i int) *said {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[i]
}

func (m *Memo) put(i int, s *said) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[int]*said{}
	}
	m.m[i] = s
}
