package results

import (
	"math"
	"slices"
	"strings"
)

// Phases is a disaggregated deployment's time to first token split by
// phase over the window, in milliseconds, each phase from the end of the
// one before: queued for a prefill replica, prefilled, the prompt's KV
// shipped, queued for a decode replica, and its first decode step.
type Phases struct {
	// Source says whose figures they are: "simulated" (knee predict's
	// core), "knee-sim" (knee sim's /metrics/summary), "vllm" (the pools'
	// Prometheus histograms: exact means, percentiles Estimated within
	// their buckets).
	Source          string  `json:"source"`
	Estimate        bool    `json:"bucket_estimates,omitempty"`
	PrefillReplicas int     `json:"prefill_replicas,omitempty"`
	DecodeReplicas  int     `json:"decode_replicas,omitempty"`
	LinkGbps        float64 `json:"kv_link_gbps,omitempty"`
	PrefillQueue    Summary `json:"prefill_queue"`
	Prefill         Summary `json:"prefill"`
	Transfer        Summary `json:"kv_transfer"`
	DecodeQueue     Summary `json:"decode_queue"`
	FirstStep       Summary `json:"first_decode_step"`
	// Unpublished names the phases the engines' metrics do not time (or
	// cannot tell apart), in PhaseNames' words: their summaries are empty.
	Unpublished []string `json:"unpublished,omitempty"`
	// Busy, predicted only, is how much of its time over the level each
	// part was at work: the prefill pool's replicas, the decode pool's,
	// and the decode replicas' links; DecodeKVFull is the share of decode
	// steps that a full KV cache stopped admitting or made preempt.
	Busy *PhaseBusy `json:"busy,omitempty"`
}

// PhaseBusy is how busy each part of a disaggregated model was: for a
// decode pool, running continuous batches, busy is occupancy, not
// saturation.
type PhaseBusy struct {
	Prefill      float64 `json:"prefill"`
	Decode       float64 `json:"decode"`
	Link         float64 `json:"kv_link"`
	DecodeKVFull float64 `json:"decode_kv_full_steps"`
}

// Bound is what binds a disaggregated model under an SLO whose nearest
// bound is on metric, and its share: for a first-token bound, the part
// that took most of the mean time to first token — prefill compute (its
// queue and compute), the KV link, decode admission (KV capacity when a
// full cache held back 5% of decode steps or more) or decode bandwidth
// (the first decode step) — as its share of it; for any other, decode
// bandwidth or KV capacity, with how busy the decode pool was.
func (p *Phases) Bound(metric string) (string, float64) {
	kvFull := p.Busy != nil && p.Busy.DecodeKVFull >= 0.05
	if !strings.HasPrefix(metric, "ttf") {
		busy := 0.0
		if p.Busy != nil {
			busy = p.Busy.Decode
		}
		if kvFull {
			return "KV capacity", busy
		}
		return "decode bandwidth", busy
	}
	admission := "decode admission"
	if kvFull {
		admission = "KV capacity"
	}
	parts := []struct {
		name string
		ms   float64
	}{{"prefill compute", p.PrefillQueue.Mean + p.Prefill.Mean}, {"the KV link", p.Transfer.Mean},
		{admission, p.DecodeQueue.Mean}, {"decode bandwidth", p.FirstStep.Mean}}
	total, top := 0.0, 0
	for i, x := range parts {
		total += x.ms
		if x.ms > parts[top].ms {
			top = i
		}
	}
	if total <= 0 {
		return "", 0
	}
	return parts[top].name, parts[top].ms / total
}

// PhaseNames are the phases in order, as JSON, CSV and the terminal name
// them.
var PhaseNames = []string{"prefill_queue", "prefill", "kv_transfer", "decode_queue", "first_decode_step"}

// All is the phases' summaries in PhaseNames' order.
func (p *Phases) All() []*Summary {
	return []*Summary{&p.PrefillQueue, &p.Prefill, &p.Transfer, &p.DecodeQueue, &p.FirstStep}
}

// Set summarises each phase's values (milliseconds, PhaseNames' order).
func (p *Phases) Set(cols [][]float64) {
	for i, s := range p.All() {
		if i < len(cols) {
			*s = SummarizeExact(cols[i])
		}
	}
}

// SummarizeExact summarises values exactly, percentiles interpolated
// between the closest ranks as numpy's default (and knee sim's
// /metrics/summary) does. NaNs are left out.
func SummarizeExact(values []float64) Summary {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return Summary{}
	}
	slices.Sort(v)
	var sum float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	var sq float64
	for _, x := range v {
		sq += (x - mean) * (x - mean)
	}
	at := func(p float64) float64 {
		r := p / 100 * float64(len(v)-1)
		lo, hi := int(math.Floor(r)), int(math.Ceil(r))
		return v[lo] + (v[hi]-v[lo])*(r-float64(lo))
	}
	return Summary{Count: int64(len(v)), Mean: mean, Stddev: math.Sqrt(sq / float64(len(v))), Min: v[0],
		P50: at(50), P90: at(90), P95: at(95), P99: at(99), Max: v[len(v)-1]}
}
