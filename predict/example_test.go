package predict_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// A level predicted in virtual time: an H100 serving Llama 3.1 8B, 4
// requests a second of 1,000-token prompts for a simulated minute. The
// same flags give the same figures, byte for byte.
func ExampleVirtual_Run() {
	target, _, err := predict.TargetSpec{Preset: "h100-80gb/llama-3.1-8b", Responses: "builtin:bench-responses"}.Load(context.Background())
	if err != nil {
		panic(err)
	}
	level := &bench.Level{Work: bench.Requests{
		Source: workload.Synthetic{Tokens: 1000, MaxTokens: 100, Seed: 1},
		Load:   driver.Load{Rate: 4, Burstiness: 1, Duration: time.Minute, Seed: 1, Warmup: 0},
	}}
	run, err := (&predict.Virtual{Target: target}).Run(context.Background(), level)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d requests, %d failed, health %s\n", run.Requests.OK, run.Requests.Failed, run.Health.Verdict)
	fmt.Printf("TTFT p50 under 100 ms: %v\n", run.Stats.TTFT.P50 < 100)
	// Output:
	// 239 requests, 0 failed, health virtual
	// TTFT p50 under 100 ms: true
}

// A sweep in virtual time with its knees, on one Runner: the same loop
// knee sweep runs live.
func ExampleVirtual_sweep() {
	target, _, err := predict.TargetSpec{Preset: "h100-80gb/llama-3.1-8b", Responses: "builtin:bench-responses"}.Load(context.Background())
	if err != nil {
		panic(err)
	}
	slo := results.SLO{Bounds: []results.Bound{{Metric: "ttft", Percentile: 95, Ms: 500}}, MaxErrorRate: 0.02}
	sw := bench.Sweep(context.Background(), &predict.Virtual{Target: target}, bench.SweepOptions{
		Loads: []float64{2, 4, 8, 16}, Parallel: 2, Sweep: &results.Sweep{Axis: "rate", SLO: slo},
		Level: func(i int, rate float64) (*bench.Level, error) {
			return &bench.Level{Index: i, Load: rate, Work: bench.Requests{
				Source: workload.Synthetic{Tokens: 2048, MaxTokens: 64, Seed: 1},
				Load:   driver.Load{Rate: rate, Burstiness: 1, Duration: 2 * time.Minute, Seed: 1, Warmup: -1}}}, nil
		},
	})
	for _, l := range sw.Levels {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%g/s meets the SLO: %v %s", l.Load, l.Verdict.Meets, l.Verdict.Why)))
	}
	fmt.Printf("SLO knee %g/s\n", sw.Knees.SLO.Load)
	// Output:
	// 2/s meets the SLO: true
	// 4/s meets the SLO: true
	// 8/s meets the SLO: true
	// 16/s meets the SLO: false ttft p95 5468 ms > 500
	// SLO knee 8/s
}
