package predict

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// What a simulated request holds in memory while its level runs, as
// measured (docs/performance.md, "knee predict's memory"): 22 bytes a
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

// MemoryBudget is the memory predictions may take (MemoryBudgetOf).
func MemoryBudget() int64 {
	n, _ := MemoryBudgetOf()
	return n
}

// MemoryBudgetOf is the memory predictions may take, and whose share it
// is: half of what the machine has available (MemAvailable, so other
// work keeps its share), half of a container's memory limit (cgroup v2's
// memory.max, as in a Kubernetes pod), a quarter of the address-space
// limit (ulimit -v: Go reserves address space well past its heap), or the
// Go memory limit (GOMEMLIMIT), whichever is lowest; 2 GiB where none is
// known.
func MemoryBudgetOf() (int64, string) {
	budget, source := int64(2<<30), "a default, this machine's memory unknown"
	lower := func(n int64, why string) {
		if n > 0 && n < budget {
			budget, source = n, why
		}
	}
	if avail, ok := memAvailable(); ok {
		budget, source = avail/2, "half the memory available"
	}
	if limit, ok := cgroupLimit(); ok {
		lower(limit/2, "half the container's memory limit")
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) == nil && rl.Cur > 0 && rl.Cur < math.MaxInt64 {
		lower(int64(rl.Cur)/4, "a quarter of the address-space limit (ulimit -v)")
	}
	if limit := debug.SetMemoryLimit(-1); limit > 0 && limit < math.MaxInt64 {
		lower(limit, "GOMEMLIMIT")
	}
	return budget, source
}

// cgroupLimit reads the memory limit of the cgroup (v2) knee runs in.
func cgroupLimit() (int64, bool) {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n > 0
}

// memAvailable reads MemAvailable from /proc/meminfo.
func memAvailable() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err == nil && kb > 0
		}
	}
	return 0, false
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
	calls  atomic.Int64
	sample []metrics.Sample
}

// newMemGuard watches for budget bytes of heap.
func newMemGuard(budget int64) *memGuard {
	return &memGuard{budget: uint64(budget), sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
}

// over reports, every 4,096 calls, whether the heap is past the budget
// once collected.
func (g *memGuard) over() bool {
	if g == nil || g.calls.Add(1)%4096 != 0 {
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
