package server

import (
	"strings"
)

// adapterOf is the base model and adapter number (from 1) a request's
// model name names, when it is an adapter.
func (s *Server) adapterOf(name string) (*model, int) {
	for _, base := range s.order {
		m := s.models[base]
		if m.spec.LoRA == nil {
			continue
		}
		for i, a := range m.spec.LoRA.Adapters {
			if a == name {
				return m, i + 1
			}
		}
	}
	return nil, 0
}

// adapterNames are the adapter numbers' names, comma-separated, as
// vLLM's lora_requests_info labels list them.
func adapterNames(l *LoRASpec, ids []int) string {
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		if id >= 1 && id <= len(l.Adapters) {
			names = append(names, l.Adapters[id-1])
		}
	}
	return strings.Join(names, ",")
}
