package health

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// MemoryBudget is the memory knee may take for what it holds (a
// prediction's requests, a run's requests in flight), and whose share it
// is: half of what the machine has available (MemAvailable, so other
// work keeps its share), half of a container's memory limit (cgroup v2's
// memory.max, as in a Kubernetes pod), a quarter of the address-space
// limit (ulimit -v: Go reserves address space well past its heap), or the
// Go memory limit (GOMEMLIMIT), whichever is lowest; 2 GiB where none is
// known.
func MemoryBudget() (int64, string) {
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
