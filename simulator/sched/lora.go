package sched

import (
	"fmt"
	"slices"
)

// LoRA is how an engine serves LoRA adapters, as vLLM does with
// --enable-lora: a batch holds requests of at most MaxLoRAs adapters
// (the GPU's adapter slots; a waiting request of another adapter is
// passed over, not waited for, as vLLM's scheduler skips it), host
// memory keeps MaxCPULoRAs of them, and an adapter not in a GPU slot is
// loaded before the step that first schedules it: from host memory
// over HostToDevice bytes/s, from disk over DiskToHost first. Every
// step reads each of its adapters' weights once and works 2 FLOPs a
// parameter for each of its tokens.
type LoRA struct {
	MaxLoRAs, MaxCPULoRAs int
	// AdapterBytes is one adapter's weights (bf16: 2 bytes a parameter).
	AdapterBytes             float64
	HostToDevice, DiskToHost float64
}

func (l *LoRA) validate() error {
	switch {
	case l.MaxLoRAs < 1 || l.MaxLoRAs > 1024:
		return fmt.Errorf("max_loras must be between 1 and 1024")
	case l.MaxCPULoRAs < l.MaxLoRAs:
		return fmt.Errorf("max_cpu_loras must be at least max_loras")
	case !(l.AdapterBytes >= 0) || !(l.HostToDevice > 0) || !(l.DiskToHost > 0):
		return fmt.Errorf("a LoRA adapter needs its size and the bandwidths that load it")
	}
	return nil
}

// loraState is which adapters sit in GPU slots and in host memory, the
// least recently used first.
type loraState struct {
	gpu, cpu []int
	// Loads counts adapters loaded into a GPU slot; ColdLoads those read
	// from disk first.
	Loads, ColdLoads int64
}

// load makes adapter a resident for a step whose batch uses the
// adapters in use, returning the seconds it takes (0 when it is).
func (c *Core) load(a int, inUse map[int]bool) float64 {
	l, st := c.cfg.LoRA, &c.lora
	if i := slices.Index(st.gpu, a); i >= 0 {
		st.gpu = append(append(st.gpu[:i:i], st.gpu[i+1:]...), a)
		return 0
	}
	secs := l.AdapterBytes / l.HostToDevice
	if i := slices.Index(st.cpu, a); i >= 0 {
		st.cpu = append(append(st.cpu[:i:i], st.cpu[i+1:]...), a)
	} else {
		secs += l.AdapterBytes / l.DiskToHost
		st.ColdLoads++
		if len(st.cpu) >= l.MaxCPULoRAs {
			st.cpu = st.cpu[1:]
		}
		st.cpu = append(st.cpu, a)
	}
	if len(st.gpu) >= l.MaxLoRAs {
		// The least recently used adapter no running request needs.
		for i, g := range st.gpu {
			if !inUse[g] {
				st.gpu = append(st.gpu[:i:i], st.gpu[i+1:]...)
				break
			}
		}
	}
	st.gpu = append(st.gpu, a)
	st.Loads++
	return secs
}

// adaptersOf is the adapters of seqs, with how many tokens each has
// scheduled.
func adaptersOf(seqs []*Seq) map[int]int {
	out := map[int]int{}
	for _, s := range seqs {
		if s.Adapter > 0 {
			out[s.Adapter] += s.scheduledTokens
		}
	}
	return out
}

// Adapters is the adapters of the running and of the waiting requests.
func (c *Core) Adapters() (running, waiting []int) {
	seen := map[int]bool{}
	for _, s := range c.running {
		if s.Adapter > 0 && !seen[s.Adapter] {
			seen[s.Adapter] = true
			running = append(running, s.Adapter)
		}
	}
	seenW := map[int]bool{}
	for i := range c.waiting.len() {
		if s := c.waiting.at(i); s.Adapter > 0 && !s.done && !seenW[s.Adapter] {
			seenW[s.Adapter] = true
			waiting = append(waiting, s.Adapter)
		}
	}
	slices.Sort(running)
	slices.Sort(waiting)
	return running, waiting
}

// AdapterLoads is how many adapters were loaded into a GPU slot, and how
// many of them from disk.
func (c *Core) AdapterLoads() (loads, cold int64) { return c.lora.Loads, c.lora.ColdLoads }
