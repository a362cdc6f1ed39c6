package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kneebench/knee/simulator/sched"
)

// LoRASpec makes a model serve LoRA adapters, as vLLM's --enable-lora
// --lora-modules does: each adapter is a model name of its own, listed
// by /v1/models with the base as its parent; a batch holds requests of
// at most MaxLoRAs adapters (default 1, vLLM's), host memory keeps
// MaxCPULoRAs (default MaxLoRAs), and an adapter not in a GPU slot is
// loaded before the step that first schedules it: its weights over
// LoadGBps (host to device, default 25, a PCIe 4 x16 link), and over
// DiskGBps first (default 2, an NVMe drive) when host memory no longer
// held it. An adapter's weights are AdapterMegabytes, or Rank × 20 ×
// hidden size × layers parameters at 2 bytes (LoRA on the attention and
// MLP projections of a Llama-like model: Llama-3.1-8B at rank 16 is 84
// MB). Every step reads its adapters' weights once and works 2 FLOPs a
// parameter a token of each.
type LoRASpec struct {
	Adapters         []string `yaml:"adapters"`
	MaxLoRAs         int      `yaml:"max_loras,omitempty"`
	MaxCPULoRAs      int      `yaml:"max_cpu_loras,omitempty"`
	Rank             int      `yaml:"rank,omitempty"`
	AdapterMegabytes float64  `yaml:"adapter_megabytes,omitempty"`
	LoadGBps         float64  `yaml:"load_gbps,omitempty"`
	DiskGBps         float64  `yaml:"disk_gbps,omitempty"`
}

// Validate checks the spec, filling vLLM's defaults.
func (l *LoRASpec) Validate() error {
	if len(l.Adapters) == 0 || len(l.Adapters) > 4096 {
		return errors.New("lora.adapters: name 1 to 4096 adapters")
	}
	seen := map[string]bool{}
	for _, a := range l.Adapters {
		if a == "" || strings.ContainsAny(a, " \t\n") || seen[a] {
			return fmt.Errorf("lora.adapters: %q is empty, has spaces or is given twice", a)
		}
		seen[a] = true
	}
	if l.MaxLoRAs == 0 {
		l.MaxLoRAs = 1
	}
	if l.MaxCPULoRAs == 0 {
		l.MaxCPULoRAs = max(l.MaxLoRAs, 1)
	}
	if l.Rank == 0 {
		l.Rank = 16
	}
	if l.LoadGBps == 0 {
		l.LoadGBps = 25
	}
	if l.DiskGBps == 0 {
		l.DiskGBps = 2
	}
	switch {
	case l.MaxLoRAs < 1 || l.MaxLoRAs > 1024:
		return errors.New("lora.max_loras must be between 1 and 1024")
	case l.MaxCPULoRAs < l.MaxLoRAs:
		return errors.New("lora.max_cpu_loras must be at least max_loras")
	case l.Rank < 1 || l.Rank > 1024:
		return errors.New("lora.rank must be between 1 and 1024")
	case !(l.AdapterMegabytes >= 0 && l.AdapterMegabytes <= 1e6) || !(l.LoadGBps > 0 && l.LoadGBps <= 1e4) || !(l.DiskGBps > 0 && l.DiskGBps <= 1e4):
		return errors.New("lora.adapter_megabytes, load_gbps and disk_gbps must be positive numbers")
	}
	return nil
}

// SchedLoRA is the spec as the scheduler core takes it, for a model of
// that hidden size and layer count.
func (l *LoRASpec) SchedLoRA(hidden, layers int) (*sched.LoRA, error) {
	bytes := l.AdapterMegabytes * 1e6
	if bytes == 0 {
		if hidden == 0 || layers == 0 {
			return nil, errors.New("lora: the model's hidden size and layers are not known: give lora.adapter_megabytes")
		}
		bytes = 2 * float64(l.Rank) * 20 * float64(hidden) * float64(layers)
	}
	return &sched.LoRA{MaxLoRAs: l.MaxLoRAs, MaxCPULoRAs: l.MaxCPULoRAs, AdapterBytes: bytes, HostToDevice: l.LoadGBps * 1e9, DiskToHost: l.DiskGBps * 1e9}, nil
}
