package predict

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"

	"github.com/kneebench/knee/health"
)

// What a simulated request holds in memory while its level runs, as
// measured (CHANGELOG.md, "knee predict's memory"): 22 bytes a
// token of its prompt and answer, and some 3,000 bytes besides. 60,000
// requests of 256 + 64 tokens peaked at 582 MiB; of 1,024 + 64, at
// 1,525 MiB.
const (
	requestBytesPerToken = 22
	requestBytesFixed    = 3000
)

// RequestBytes is the memory a simulated request of tokens tokens (prompt
// and answer) holds while its level runs.
func RequestBytes(tokens float64) float64 {
	return requestBytesFixed + requestBytesPerToken*math.Max(tokens, 1)
}

// MemoryBudget is the memory predictions may take (health.MemoryBudget).
func MemoryBudget() int64 {
	n, _ := health.MemoryBudget()
	return n
}

// Bytes writes a size in words.
func Bytes(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MB", n/(1<<20))
	}
	return fmt.Sprintf("%.0f KB", n/(1<<10))
}

// ErrOutOfMemory stops a prediction whose memory outgrew the budget.
var ErrOutOfMemory = errors.New("the prediction outgrew the memory this machine can give it")

// memGuard watches the heap while predictions run and says when it
// outgrows the budget, so a level that would have died of memory stops,
// what it predicted kept, instead (an estimate ahead cannot know every
// workload: a closed loop's requests are not known before it runs).
type memGuard struct {
	budget uint64
	calls  int // Waits so far; a level's server waits on one goroutine
	sample []metrics.Sample
}

// newMemGuard watches for budget bytes of heap.
func newMemGuard(budget int64) *memGuard {
	return &memGuard{budget: uint64(budget), sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
}

// over reports, every 4,096 calls, whether the heap is past the budget
// once collected.
func (g *memGuard) over() bool {
	if g == nil {
		return false
	}
	if g.calls++; g.calls%4096 != 0 {
		return false
	}
	metrics.Read(g.sample)
	if g.sample[0].Value.Uint64() < g.budget {
		return false
	}
	// Garbage counts until collected: judge what is live.
	runtime.GC()
	metrics.Read(g.sample)
	return g.sample[0].Value.Uint64() >= g.budget
}
