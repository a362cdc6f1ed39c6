package battery

import (
	"errors"
	"fmt"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/model"
	"github.com/kneebench/knee/simulator/sched"
)

// engines maps a cell's engine to the schedules_as rules knee has for it.
var engines = map[string]string{
	"vllm": model.SchedulesVLLM, "vllm-v0": model.SchedulesVLLMV0,
	"sglang": model.SchedulesSGLang, "trtllm": model.SchedulesTRTLLM,
}

// Config is the scheduler core's configuration for the cell as knee's
// presets describe it (the shipped tuning), and the preset it comes from.
func (c *Cell) Config() (sched.Config, presets.Spec, error) {
	s, err := presets.ParseSpec(c.Spec())
	if err != nil {
		return sched.Config{}, s, err
	}
	f, err := model.PresetModels(s)
	if err != nil {
		return sched.Config{}, s, err
	}
	m := &f.Models[0]
	rules, ok := engines[c.Engine]
	if !ok {
		return sched.Config{}, s, fmt.Errorf("%s: engine %q: want vllm, vllm-v0, sglang or trtllm", c.Name, c.Engine)
	}
	m.SchedulesAs = rules
	return f.SchedConfig(m), s, nil
}

// ErrUnfit says the preset's KV cache cannot hold one of the cell's
// requests: knee refuses the configuration, so it predicts nothing.
var ErrUnfit = errors.New("the KV cache cannot hold one request")

// Simulate runs the cell on the scheduler core in virtual time and
// returns every metric the cell measured, computed as vLLM's and
// TensorRT-LLM's benchmark tools compute them: TTFT and E2E from the
// request's send, TPOT over the tokens after the first, ITL every gap
// between tokens of all requests pooled, throughput over the run's span.
func Simulate(cfg sched.Config, c *Cell) (map[string]float64, error) {
	t, err := run(cfg, c)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for m := range c.Measured {
		out[m] = t.metric(m)
	}
	return out, nil
}

// timeline is what a run's requests saw, in seconds.
type timeline struct {
	ttft, tpot, e2e, itl []float64
	tokens               int
	span                 float64
}

// run drives the core: the cell's users each send their next request as
// their last one ends (closed loop), or every request at time 0.
func run(cfg sched.Config, c *Cell) (*timeline, error) {
	core := sched.New(cfg)
	if !core.Fits(c.Input, c.Output) {
		return nil, ErrUnfit
	}
	_, wantITL := c.Measured["itl_p50"]
	arrival := make([]float64, c.Requests)
	first := make([]float64, c.Requests)
	last := make([]float64, c.Requests)
	sent := 0
	send := func(at float64) {
		core.Add(sched.Request{ID: int64(sent), Arrival: at, PromptLen: c.Input, OutputLen: c.Output})
		arrival[sent] = at
		sent++
	}
	users := c.Requests
	if c.Concurrency > 0 {
		users = min(c.Concurrency, c.Requests)
	}
	for range users {
		send(0)
	}
	t := &timeline{}
	for now := 0.0; !core.Idle(); {
		st := core.Step(now)
		if st == nil {
			break
		}
		for _, e := range st.Emitted {
			id := e.Seq.ID
			if e.Index == 0 {
				first[id] = st.End
			} else if wantITL {
				t.itl = append(t.itl, st.End-last[id])
			}
			last[id] = st.End
			t.tokens++
		}
		for range st.Finished {
			if sent < c.Requests {
				send(st.End)
			}
		}
		now = st.End
	}
	if sent < c.Requests {
		return nil, fmt.Errorf("%s: the core stopped with %d of %d requests sent", c.Name, sent, c.Requests)
	}
	t.fill(arrival, first, last, c.Output)
	return t, nil
}

// fill derives each request's latencies and the run's span.
func (t *timeline) fill(arrival, first, last []float64, output int) {
	for i := range arrival {
		t.ttft = append(t.ttft, first[i]-arrival[i])
		t.e2e = append(t.e2e, last[i]-arrival[i])
		if output > 1 {
			t.tpot = append(t.tpot, (last[i]-first[i])/float64(output-1))
		}
		t.span = max(t.span, last[i])
	}
}

// metric is one figure of the run, latencies in ms.
func (t *timeline) metric(name string) float64 { return figures[name](t) }

// figures compute each of Metrics from a run: numpy's percentiles, as
// vLLM's benchmark takes them (results.SummarizeExact).
var figures = map[string]func(*timeline) float64{
	"ttft_mean": func(t *timeline) float64 { return 1000 * sum(t.ttft).Mean },
	"ttft_p50":  func(t *timeline) float64 { return 1000 * sum(t.ttft).P50 },
	"ttft_p95":  func(t *timeline) float64 { return 1000 * sum(t.ttft).P95 },
	"tpot_mean": func(t *timeline) float64 { return 1000 * sum(t.tpot).Mean },
	"tpot_p95":  func(t *timeline) float64 { return 1000 * sum(t.tpot).P95 },
	"itl_p50":   func(t *timeline) float64 { return 1000 * sum(t.itl).P50 },
	"e2e_p95":   func(t *timeline) float64 { return 1000 * sum(t.e2e).P95 },
	"e2e_max":   func(t *timeline) float64 { return 1000 * sum(t.e2e).Max },
	"out_tps":   func(t *timeline) float64 { return float64(t.tokens) / t.span },
}

// sum is xs summarised.
func sum(xs []float64) results.Summary { return results.SummarizeExact(xs) }
