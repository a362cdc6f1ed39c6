package sched

import (
	"testing"
)

// BenchmarkVirtual measures virtual-time throughput on the issue's
// workload: 512-token prompts, 64 output tokens, batches up to 256, with
// arrivals fast enough to keep the batch full. It reports simulated
// requests per wall-second.
func BenchmarkVirtual(b *testing.B) {
	cfg := baseConfig(0, 8192, 256)
	const n = 20000
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = withIDs(int64(i), float64(i)*0.0005, uniquePrompt(uint64(i)+1, 512), 64)
	}
	b.ResetTimer()
	maxBatch := 0
	for i := 0; i < b.N; i++ {
		RunVirtual(cfg, reqs, func(s *Step) { maxBatch = max(maxBatch, s.BatchSize) })
	}
	b.StopTimer()
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(maxBatch), "max-batch")
}
