package live

import (
	"context"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// TestLongRequestsInShortWindowsAreNotSaturation: requests last 1 s (first
// token at 40 ms, then 48 more 20 ms apart) and each level's window is
// 1.5 s, against a server with no limit, which keeps up at every rate.
// Counting completions over the window plus its drain read that as
// completions at 60% of the offer; over the shifted window they match it.
// TTFT is the same at every level, so there is no curvature knee either.
func TestLongRequestsInShortWindowsAreNotSaturation(t *testing.T) {
	t.Parallel()
	inBubble(t, testLongRequestsInShortWindowsAreNotSaturation)
}

func testLongRequestsInShortWindowsAreNotSaturation(t *testing.T) {
	srv := &fakeserver.Stream{TTFT: 40 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 49}
	url := fakeserver.Start(t, srv)
	sw := &results.Sweep{Axis: "rate", Workload: "requests",
		SLO: results.SLO{Bounds: []results.Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}}
	live := &Live{Client: newTestClient(t, url, 5*time.Second, 256)}
	bench.Sweep(context.Background(), live, bench.SweepOptions{
		Loads: []float64{8, 16, 32},
		Sweep: sw,
		Level: func(i int, load float64) (*bench.Level, error) {
			return &bench.Level{Index: i, Load: load, Work: bench.Requests{Source: workload.FixedPrompt{Text: "hi", MaxTokens: 49},
				Load: driver.Load{Rate: load, Burstiness: 1, Duration: 1500 * time.Millisecond, Warmup: 0, Seed: 7}}}, nil
		},
	})
	for _, l := range sw.Levels {
		a := l.Run.Arrivals
		t.Logf("rate %g: offered %.2f/s, completions over the shifted window %.2f/s, TTFT sched p95 %.1f ms",
			l.Load, a.OfferedRate, a.CompletionRate, l.Run.Stats.TTFTSched.P95)
	}
	if k := sw.Knees.Saturation; k != nil {
		t.Errorf("saturation at %g/s against a server that keeps up", k.Load)
	}
	if k := sw.Knees.Curvature; k != nil || sw.Knees.CurveShape != string(results.CurveFlat) {
		t.Errorf("curvature knee %+v (shape %q) on a flat TTFT curve", k, sw.Knees.CurveShape)
	}
}
