package telemetry

import (
	"github.com/kneebench/knee/simulator/sched"
	"github.com/prometheus/client_golang/prometheus"
)

// vLLM's NIXL connector buckets (kv_connector/v1/nixl_connector.py).
var bucketsXfer = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 5}

// PoolMetrics is one pool of a disaggregated model as its own engines'
// /metrics show it — vLLM's names in a registry of its own, as a P/D
// deployment's prefill and decode pods each publish theirs — and, for
// the decode pool, the NIXL connector's transfers.
type PoolMetrics struct {
	*Metrics
	MM *ModelMetrics
	// Xfer and Bytes are vllm:nixl_xfer_time_seconds and
	// vllm:nixl_bytes_transferred (decode pool only).
	Xfer, Bytes prometheus.Observer
}

// NewPoolMetrics registers a pool's collectors for model.
func NewPoolMetrics(model string, maxContext int, role sched.Role) *PoolMetrics {
	m := NewMetrics(maxContext)
	p := &PoolMetrics{Metrics: m, MM: m.ForModel(model)}
	if role != sched.RoleDecode {
		return p
	}
	h := func(name, help string, b []float64) prometheus.Observer {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: b}, []string{"model_name", "engine"})
		m.Reg.MustRegister(v)
		return v.WithLabelValues(model, "0")
	}
	p.Xfer = h("vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.", bucketsXfer)
	p.Bytes = h("vllm:nixl_bytes_transferred", "Histogram of bytes transferred per NIXL KV Cache transfers.",
		prometheus.ExponentialBuckets(1<<20, 4, 10))
	return p
}

// Finished records a request's phases on its pool, as that pool's
// engine counts its part: the prefill pool queued and prefilled it; the
// decode pool queued it, then spent its prefill time loading the KV and
// computing the first token (vLLM's decode instance schedules a request
// before its KV arrives).
func (p *PoolMetrics) Finished(role sched.Role, ph sched.Phases, prompt, generated int, reason string) {
	mm := p.MM
	if c := mm.Success[reason]; c != nil {
		c.Inc()
	}
	if role == sched.RolePrefill {
		mm.Queue.Observe(ph.PrefillQueue())
		mm.Prefill.Observe(ph.Prefill())
		mm.PromptTotal.Add(float64(prompt - ph.CachedTokens))
		mm.GenTotal.Add(1)
		return
	}
	mm.Queue.Observe(ph.DecodeQueue())
	mm.Prefill.Observe(ph.Transfer() + ph.FirstStep())
	mm.GenTotal.Add(float64(generated))
	p.Xfer.Observe(ph.Transfer())
	p.Bytes.Observe(ph.TransferBytes)
}
