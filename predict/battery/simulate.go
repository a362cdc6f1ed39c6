package battery

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/kneebench/knee/predict"
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
	if c.KernelShapes {
		f.ShapeProducts()
	}
	if c.NoVocabulary {
		m.Architecture.VocabSize = 0
	}
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

// run drives the core as the cell's benchmark drove its engine. A served
// one's client is knee predict's: the users start their streams
// predict.StreamGap apart and each sends its next request
// predict.Turnaround after its last one ends (closed loop); a burst is as
// many users as requests. An offline one (offline) hands the engine every
// request of its first batch at once.
func run(cfg sched.Config, c *Cell) (*timeline, error) {
	core := sched.New(cfg)
	if !core.Fits(c.Input, c.Output) {
		return nil, ErrUnfit
	}
	users := c.Requests
	if c.Concurrency > 0 {
		users = min(c.Concurrency, c.Requests)
	}
	l := &loop{cell: c, cfg: cfg, core: core, arrival: make([]float64, c.Requests),
		first: make([]float64, c.Requests), last: make([]float64, c.Requests), t: &timeline{}}
	_, l.wantITL = c.Measured["itl_p50"]
	gap, turnaround := predict.StreamGap.Seconds(), predict.Turnaround.Seconds()
	if offline[c.Source] {
		gap, turnaround = 0, 0
	}
	l.turnaround = turnaround
	for i := range users {
		l.schedule(float64(i) * gap)
	}
	for now := 0.0; l.admit(now) || !core.Idle(); {
		if core.Idle() {
			now = l.due[0]
			continue
		}
		st := core.Step(now)
		if st == nil {
			break
		}
		l.book(st)
		now = st.End
	}
	if l.admitted < c.Requests {
		return nil, fmt.Errorf("%s: the core stopped with %d of %d requests sent", c.Name, l.admitted, c.Requests)
	}
	l.t.fill(l.arrival, l.first, l.last, c.Output)
	return l.t, nil
}

// loop is a run under way: the requests sent and those due to arrive.
type loop struct {
	cell    *Cell
	cfg     sched.Config
	core    *sched.Core
	wantITL bool
	// sent counts the requests scheduled and admitted those in the core;
	// due holds the arrival times of the rest, ascending.
	sent, admitted       int
	due                  []float64
	turnaround           float64
	arrival, first, last []float64
	t                    *timeline
}

// schedule sends the next request at at.
func (l *loop) schedule(at float64) {
	if l.sent < l.cell.Requests {
		l.due = slices.Insert(l.due, sort.Search(len(l.due), func(i int) bool { return l.due[i] > at }), at)
		l.sent++
	}
}

// admit puts the requests due by now in the core and says whether any
// are still to come.
func (l *loop) admit(now float64) bool {
	for len(l.due) > 0 && l.due[0] <= now {
		id := l.admitted
		l.admitted++
		r := sched.Request{ID: int64(id), Arrival: l.due[0], PromptLen: l.cell.Input, OutputLen: l.cell.Output}
		if l.cfg.PrefixCaching {
			r.Chain, r.ChainBlock = ownChain(id, l.cell.Input+l.cell.Output, l.cfg.BlockSize), l.cfg.BlockSize
		}
		l.core.Add(r)
		l.arrival[id] = l.due[0]
		l.due = l.due[1:]
	}
	return len(l.due) > 0
}

// book records a step's tokens and sends a finished request's follow-up.
func (l *loop) book(st *sched.Step) {
	for _, e := range st.Emitted {
		id := e.Seq.ID
		if e.Index == 0 {
			l.first[id] = st.End
		} else if l.wantITL {
			l.t.itl = append(l.t.itl, st.End-l.last[id])
		}
		l.last[id] = st.End
		l.t.tokens++
	}
	for range st.Finished {
		l.schedule(st.End + l.turnaround)
	}
}

// ownChain is request id's content as the prefix cache keys it, as knee
// predict gives every request its own (sched.Request.Chain): the
// benchmarks' prompts are random and unique, so no request hits
// another's blocks, but a preempted request's computed blocks stay cached
// until they are evicted (vLLM V1's KVCacheManager frees them to the
// free queue, its tail blocks first), and its readmission recomputes only
// what was evicted. Without content a preemption loses everything, and
// a cache that holds one long prompt and a chunk of the next thrashes.
// Nothing is shared, so a block's hash need only be its own: a mix of
// the request and the block's place (SplitMix64's finaliser).
func ownChain(id, tokens, bs int) []uint64 {
	out := make([]uint64, tokens/bs)
	for b := range out {
		z := uint64(id)<<32 | uint64(b) + 0x9e3779b97f4a7c15
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		out[b] = z ^ z>>31
	}
	return out
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
	"e2e_mean":  func(t *timeline) float64 { return 1000 * sum(t.e2e).Mean },
	"e2e_p95":   func(t *timeline) float64 { return 1000 * sum(t.e2e).P95 },
	"e2e_max":   func(t *timeline) float64 { return 1000 * sum(t.e2e).Max },
	"out_tps":   func(t *timeline) float64 { return float64(t.tokens) / t.span },
}

// sum is xs summarised.
func sum(xs []float64) results.Summary { return results.SummarizeExact(xs) }
