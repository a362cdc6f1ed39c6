package model

import (
	"errors"
	"fmt"

	"github.com/kneebench/knee/simulator/sched"
)

// DisaggSpec serves a scheduler model disaggregated: a pool of prefill
// replicas and one of decode replicas, each replica the model's GPUs
// (its hardware and tensor_parallel), the prompt's KV shipped between
// them over a link of kv_link_gbps (sched.DisaggConfig).
type DisaggSpec struct {
	PrefillReplicas int     `yaml:"prefill_replicas"`
	DecodeReplicas  int     `yaml:"decode_replicas"`
	KVLinkGbps      float64 `yaml:"kv_link_gbps"`
	// Routing picks a replica in each pool (round-robin when empty).
	Routing string `yaml:"routing,omitempty"`
}

// DisaggConfig is a validated disaggregated model's configuration, seed
// drawing its routers' random choices; false for an aggregated model.
func (f *ModelsFile) DisaggConfig(m *ModelSpec, seed uint64) (sched.DisaggConfig, bool) {
	d := m.Disaggregated
	if d == nil || m.Engine != EngineScheduler {
		return sched.DisaggConfig{}, false
	}
	cfg := f.SchedConfig(m)
	routing, _ := sched.ParseRouting(d.Routing) // checked by validateDisagg
	return sched.DisaggConfig{Prefill: cfg, Decode: cfg, PrefillReplicas: d.PrefillReplicas, DecodeReplicas: d.DecodeReplicas,
		LinkGbps: d.KVLinkGbps, Routing: routing, Seed: seed}, true
}

// validateDisagg checks a disaggregated model: a scheduler model whose
// pools and link make sense and whose replicas each hold a request of
// its whole context, as vLLM refuses to start one that cannot.
func (f *ModelsFile) validateDisagg(m *ModelSpec) error {
	if m.Disaggregated == nil {
		return nil
	}
	if m.Engine != EngineScheduler {
		return errors.New("disaggregated: only a scheduler model is served disaggregated")
	}
	if m.Pooling != nil {
		return errors.New("disaggregated: a pooling model decodes nothing, so it has no decode pool to split off")
	}
	if _, err := sched.ParseRouting(m.Disaggregated.Routing); err != nil {
		return fmt.Errorf("disaggregated: %v", err)
	}
	cfg, _ := f.DisaggConfig(m, 0)
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("disaggregated: %v", err)
	}
	if room := cfg.Decode.NumBlocks * cfg.Decode.BlockSize; room < m.ContextLength {
		fix := "lower context_length or give it more memory"
		if m.Preset != "" {
			fix = "a preset keeps its model's context: pick a GPU with more memory, or more of them (GPUxN)"
		}
		return fmt.Errorf("disaggregated: a replica's KV cache holds %d tokens, under the context_length of %d: "+
			"it could not take one request of the whole context, as vLLM refuses to start (%s)", room, m.ContextLength, fix)
	}
	return nil
}
