package predict

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
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
	full, err := (&Virtual{Target: target}).Run(context.Background(), requestsLevel(src,
		driver.Load{Concurrency: 256, Duration: 2 * time.Minute, Seed: 1, Warmup: 256}))
	if err != nil {
		t.Fatal(err)
	}
	capacity := full.Throughput.RequestsPerS
	rates := []float64{0.5 * capacity, 0.75 * capacity, 0.9 * capacity, 1.1 * capacity, 1.3 * capacity}
	sw := bench.Sweep(context.Background(), &Virtual{Target: target}, bench.SweepOptions{Loads: rates, Parallel: runtime.GOMAXPROCS(0),
		Sweep: &results.Sweep{Axis: "rate", SLO: results.SLO{Bounds: []results.Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}},
		Level: func(_ int, rate float64) (*bench.Level, error) {
			return requestsLevel(src, driver.Load{Rate: rate, Burstiness: 1, Duration: 2 * time.Minute, Seed: 1, Warmup: -1}), nil
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

// voiceSweep predicts a voice sweep of the default call shape (an
// 18,000-token system prompt, 4 turns 5–7 s apart) on an H100 8B preset.
func voiceSweep(t *testing.T, rates []float64, step time.Duration) *results.Sweep {
	t.Helper()
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	v := workload.Voice{SystemPromptTokens: 18000, UserTokens: 40, Turns: 4, GapMin: 5 * time.Second, GapMax: 7 * time.Second,
		OutputTokens: 100, Seed: 1, WordsPerToken: 0.75}
	sw := bench.Sweep(context.Background(), &Virtual{Target: target}, bench.SweepOptions{Loads: rates, Parallel: runtime.GOMAXPROCS(0),
		Sweep: &results.Sweep{Axis: "rate", SLO: results.SLO{Bounds: []results.Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}},
		Level: func(_ int, rate float64) (*bench.Level, error) {
			return &bench.Level{Work: bench.Calls{Source: v, Load: driver.CallLoad{Rate: rate, Duration: step, Seed: 1, DrainTimeout: 5 * time.Minute}}}, nil
		}})
	for _, l := range sw.Levels {
		if l.Error != "" {
			t.Fatal(l.Error)
		}
	}
	return sw
}

// TestVoiceSaturation: calls on a server that keeps up read no saturation
// in 15 s and 45 s windows, though a call's turns end seconds apart and
// many fall past the window's edge (they read 9–17% short before the
// caller's pauses were taken out of their ages); calls past the server's
// capacity read saturated at the first level past it, as ten-minute
// windows show it (0.5 calls/s keeps up, 0.7 does not).
func TestVoiceSaturation(t *testing.T) {
	for _, step := range []time.Duration{15 * time.Second, 45 * time.Second} {
		sw := voiceSweep(t, []float64{0.05, 0.1, 0.2}, step)
		if k := sw.Knees.Saturation; k != nil {
			t.Errorf("%s levels: saturation at %v calls/s on a server at a tenth of its capacity", step, k.Load)
			for _, l := range sw.Levels {
				a := l.Run.Arrivals
				t.Logf("%.2f/s: completion %.3f of %.3f turns/s", l.Load, a.CompletionRate, l.Run.Calls.TurnsOfferedPerS)
			}
		}
	}
	// The truth from ten-minute levels, where a queue that grows shows
	// beyond doubt; two-minute levels (the default step) must find the
	// same level, or one next to it.
	rates := []float64{0.5, 0.7, 0.9, 1.2}
	long := voiceSweep(t, rates, 10*time.Minute)
	truth := long.Knees.Saturation
	if truth == nil || truth.Index == 0 {
		t.Fatalf("ten-minute levels: saturation %+v, want one past the lowest level (the test's premise)", truth)
	}
	sw := voiceSweep(t, rates, 2*time.Minute)
	if k := sw.Knees.Saturation; k == nil || k.Index < truth.Index-1 || k.Index > truth.Index+1 {
		t.Errorf("two-minute levels: saturation %+v, want within one level of %v calls/s", k, truth.Load)
		for i := range sw.Levels {
			for _, l := range []results.Level{long.Levels[i], sw.Levels[i]} {
				a := l.Run.Arrivals
				t.Logf("%.2f/s over %.0f s: completion %.3f of %.3f turns/s, ages %.0f → %.0f ms", l.Load, l.Run.WindowSeconds, a.CompletionRate, l.Run.Calls.TurnsOfferedPerS, a.AgeFirstThirdMs, a.AgeLastThirdMs)
			}
		}
	}
	if k := sw.Knees.Saturation; k != nil {
		t.Logf("saturation at %v calls/s over ten minutes, %v over two", truth.Load, k.Load)
	}
}
