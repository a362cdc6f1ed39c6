package predict

import (
	"context"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// TestCancelStopsVirtualTime checks that a cancelled context stops a
// virtual level of requests or calls at once, however much simulated time
// is left (a level of 24 simulated hours would otherwise run for
// minutes), and that what it predicted comes back marked interrupted.
func TestCancelStopsVirtualTime(t *testing.T) {
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	levels := map[string]func() (*results.Run, error){
		"requests": func() (*results.Run, error) {
			return (&Virtual{Target: target}).Run(ctx, requestsLevel(workload.Synthetic{Tokens: 512, MaxTokens: 128, Seed: 1},
				driver.Load{Rate: 20, Burstiness: 1, Duration: 24 * time.Hour, Seed: 1}))
		},
		"calls": func() (*results.Run, error) {
			v := workload.Voice{SystemPromptTokens: 500, UserTokens: 30, Turns: 4, GapMin: time.Second, GapMax: 2 * time.Second, OutputTokens: 40, Seed: 1}
			return (&Virtual{Target: target}).Run(ctx, &bench.Level{Work: bench.Calls{Source: v, Load: driver.CallLoad{Rate: 5, Duration: 24 * time.Hour, Seed: 1}}})
		},
	}
	for name, run := range levels {
		begin := time.Now()
		if res, err := run(); err != nil || res == nil || !res.Interrupted {
			t.Errorf("%s: got %v, %v; want a result marked interrupted", name, res, err)
		}
		// A bound only against a hang: the full level takes minutes.
		if spent := time.Since(begin); spent > 20*time.Second {
			t.Errorf("%s: a cancelled level ran %v", name, spent)
		}
	}
}
