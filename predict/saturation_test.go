package predict

import (
	"context"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// TestSaturationAtCapacity measures a preset's capacity for 2,048-token
// prompts and 64-token answers (a closed loop of 256 streams: the most it
// completes per second), then predicts an open-loop sweep around it with
// two-minute levels: levels under the capacity keep up, and saturation is
// the first level past it, within one level, whatever the 5% noise margin
// of throughput alone would let pass.
func TestSaturationAtCapacity(t *testing.T) {
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	src := workload.Synthetic{Tokens: 2048, MaxTokens: 64, Seed: 1}
	full, err := Level(context.Background(), Options{Target: target, Source: src,
		Load: bench.Load{Concurrency: 256, Duration: 2 * time.Minute, Seed: 1, Warmup: 256}})
	if err != nil {
		t.Fatal(err)
	}
	capacity := full.Throughput.RequestsPerS
	rates := []float64{0.5 * capacity, 0.75 * capacity, 0.9 * capacity, 1.1 * capacity, 1.3 * capacity}
	sw := Sweep(SweepOptions{Loads: rates, Sweep: &results.Sweep{Axis: "rate",
		SLO: results.SLO{Metric: "ttft_sched", Percentile: 95, ThresholdMs: 300, MaxErrorRate: 0.02}},
		Run: func(_ int, rate float64) (*results.Run, error) {
			return Level(context.Background(), Options{Target: target, Source: src,
				Load: bench.Load{Rate: rate, Burstiness: 1, Duration: 2 * time.Minute, Seed: 1, Warmup: -1}})
		}})
	k := sw.Knees.Saturation
	t.Logf("capacity %.2f req/s, saturation %+v", capacity, k)
	if k == nil || k.Index < 2 || k.Index > 3 {
		t.Errorf("capacity %.2f req/s: saturation %+v, want the level at 0.9× or 1.1× of it", capacity, k)
		for _, l := range sw.Levels {
			a := l.Run.Arrivals
			t.Logf("%.2f/s: completion %.2f, ages %.0f → %.0f ms", l.Load, a.CompletionRate, a.AgeFirstThirdMs, a.AgeLastThirdMs)
		}
	}
}
