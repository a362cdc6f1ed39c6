package predict

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/workload"
)

// TestCancelStopsVirtualTime checks that a cancelled context stops a
// virtual level of requests or calls at once, with the context's error,
// however much simulated time is left: a level of 24 simulated hours
// would otherwise run for minutes.
func TestCancelStopsVirtualTime(t *testing.T) {
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	levels := map[string]func() error{
		"requests": func() error {
			_, err := Level(ctx, Options{Target: target, Source: workload.Synthetic{Tokens: 512, MaxTokens: 128, Seed: 1},
				Load: driver.Load{Rate: 20, Burstiness: 1, Duration: 24 * time.Hour, Seed: 1}})
			return err
		},
		"calls": func() error {
			v := workload.Voice{SystemPromptTokens: 500, UserTokens: 30, Turns: 4, GapMin: time.Second, GapMax: 2 * time.Second, OutputTokens: 40, Seed: 1}
			_, err := VoiceLevel(ctx, VoiceOptions{Target: target, VoiceOptions: bench.VoiceOptions{CallSource: v, Rate: 5, Duration: 24 * time.Hour, Seed: 1}})
			return err
		},
	}
	for name, run := range levels {
		begin := time.Now()
		if err := run(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled", name, err)
		}
		// A bound only against a hang: the full level takes minutes.
		if spent := time.Since(begin); spent > 20*time.Second {
			t.Errorf("%s: a cancelled level ran %v", name, spent)
		}
	}
}
