package telemetry

import "github.com/kneebench/knee/simulator/sched"

// phaseNames are a disaggregated model's phases of the time to first
// token in /metrics/summary, each from the end of the one before.
var phaseNames = []string{"prefill_queue", "prefill", "kv_transfer", "decode_queue", "first_decode_step"}

// phaseRings keep the phases of the last requests of a disaggregated
// model.
type phaseRings []*ring

// Phases records the phases of a disaggregated model's finished request.
func (s *Summary) Phases(p sched.Phases) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phases == nil {
		for range phaseNames {
			s.phases = append(s.phases, newRing(requestWindow))
		}
	}
	for i, v := range []float64{p.PrefillQueue(), p.Prefill(), p.Transfer(), p.DecodeQueue(), p.FirstStep()} {
		s.phases[i].push(v)
	}
}

// phaseStats is the phases' summaries by name (nil: no phases kept).
func (s *Summary) phaseStats() map[string]Stats {
	if s.phases == nil {
		return nil
	}
	out := map[string]Stats{}
	for i, name := range phaseNames {
		out[name] = s.phases[i].stats()
	}
	return out
}

func (s *Summary) resetPhases() {
	for _, r := range s.phases {
		r.reset()
	}
}
