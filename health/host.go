package health

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// hostCPU is the whole machine's CPU time, in the kernel's ticks, as
// /proc/stat's first line counts it.
type hostCPU struct {
	total, idle, steal uint64
	ok                 bool
}

// readHostCPU reads /proc/stat; ok is false where there is none.
func readHostCPU() hostCPU {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return hostCPU{}
	}
	return parseHostCPU(b)
}

// parseHostCPU reads the "cpu" line: user nice system idle iowait irq
// softirq steal (guest time is already inside user).
func parseHostCPU(b []byte) hostCPU {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 9 || string(f[0]) != "cpu" {
			continue
		}
		var v [8]uint64
		for i := range v {
			n, err := strconv.ParseUint(string(f[i+1]), 10, 64)
			if err != nil {
				return hostCPU{}
			}
			v[i] = n
		}
		h := hostCPU{idle: v[3] + v[4], steal: v[7], ok: true}
		for _, n := range v {
			h.total += n
		}
		return h
	}
	return hostCPU{}
}

// shares are the busy and stolen shares of the machine's CPU between a and
// b: busy counts every tick not idle (stolen ones too).
func (a hostCPU) shares(b hostCPU) (busy, steal float64, ok bool) {
	if !a.ok || !b.ok || b.total <= a.total {
		return 0, 0, false
	}
	d := float64(b.total - a.total)
	return 1 - float64(b.idle-a.idle)/d, float64(b.steal-a.steal) / d, true
}
