package model

import (
	"errors"
	"fmt"
)

// v0WholeContext is the longest context vLLM V0's OpenAI server served
// without turning chunked prefill on (VLLMV0Rules).
const v0WholeContext = 32768

// servedContexts applies each model's max_model_len: the context it
// serves, at most its own.
func (f *ModelsFile) servedContexts() error {
	for i := range f.Models {
		m := &f.Models[i]
		switch n := m.MaxModelLen; {
		case n == 0:
		case n < 0 || m.ContextLength > 0 && n > m.ContextLength:
			return fmt.Errorf("model %q: max_model_len %d: a context of 1 up to the model's %d tokens",
				m.Name, n, m.ContextLength)
		default:
			m.ContextLength = n
		}
	}
	return nil
}

// checkMultiStep checks num_scheduler_steps and multi_step_stream_outputs:
// vLLM V0's, modelled as it ran without chunked prefill.
func checkMultiStep(m *ModelSpec) error {
	n := m.NumSchedulerSteps
	switch o := m.ScheduleOverheadMs; {
	case !(o >= 0 && o <= 1000):
		return fmt.Errorf("schedule_overhead_ms %v: 0 up to 1000 ms a scheduler call", o)
	case o > 0 && m.Engine != EngineScheduler:
		return errors.New("schedule_overhead_ms: only a scheduler model has a scheduler")
	case n == 0 && m.MultiStepStreamOutputs != nil:
		return errors.New("multi_step_stream_outputs: how num_scheduler_steps's windows stream; give num_scheduler_steps above 1")
	case n == 0:
		return nil
	case n < 1 || n > 1024:
		return fmt.Errorf("num_scheduler_steps %d: 1 (every step scheduled) up to 1024", n)
	case m.Engine != EngineScheduler:
		return errors.New("num_scheduler_steps: only a scheduler model has steps")
	case n > 1 && m.SchedulesAs != SchedulesVLLMV0:
		return fmt.Errorf("num_scheduler_steps %d: vLLM V0's multi-step (V1 has none): give schedules_as: %s", n, SchedulesVLLMV0)
	case n > 1 && m.ContextLength > v0WholeContext:
		return fmt.Errorf("num_scheduler_steps %d: modelled as vLLM V0 ran it without chunked prefill, which a context "+
			"of %d tokens turns on: give max_model_len: %d or less", n, m.ContextLength, v0WholeContext)
	}
	return nil
}
