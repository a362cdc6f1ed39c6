package predict

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/workload"
)

// pdLevel predicts 1,000-token prompts at rate on a 1PnD llama-3.1-8b on
// H100s whose decode replicas' KV links run at gbps, arrivals as bursty
// as burstiness (1: Poisson; 1,000: all but evenly spaced).
func pdLevel(t *testing.T, decode int, gbps, rate, burstiness float64) *results.Run {
	t.Helper()
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	c, _, err := target.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg := sched.DisaggConfig{Prefill: c, Decode: c, PrefillReplicas: 1, DecodeReplicas: decode, LinkGbps: gbps}
	r, err := (&Virtual{Target: target, Disagg: &cfg}).Run(context.Background(), requestsLevel(
		workload.Synthetic{Tokens: 1000, MaxTokens: 64, Seed: 4}, driver.Load{Rate: rate, Burstiness: burstiness, Duration: 2 * time.Minute, Seed: 4, DrainTimeout: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Phases == nil {
		t.Fatal("a disaggregated prediction carries no phases")
	}
	return r
}

// The transfer term is the prompt's KV over the link: llama-3.1-8b keeps
// 128 KiB a token in bf16, so a 1,000-token prompt's takes 1.0486 s at
// 1 Gb/s and 10.5 ms at 100 Gb/s when no other shares the link (arrivals
// two seconds apart); the phases add up to the time to first token.
// Poisson arrivals at the same rate overlap on the half-busy link, which
// they share, and take longer (a processor-sharing queue: about the
// transfer over one less the link's load, on average).
func TestDisaggTransferTermPredicted(t *testing.T) {
	slow, fast := pdLevel(t, 1, 1, 0.5, 1000), pdLevel(t, 1, 100, 0.5, 1000)
	prompt := slow.Tokens.Input.P50
	want := prompt * 128 * 1024 * 8 / 1e9 * 1000
	t.Logf("prompts of %.1f tokens: transfer p50 %.1f ms at 1 Gb/s (formula %.1f), %.2f ms at 100 Gb/s; TTFT p50 %.0f and %.0f ms",
		prompt, slow.Phases.Transfer.P50, want, fast.Phases.Transfer.P50, slow.Stats.TTFT.P50, fast.Stats.TTFT.P50)
	if math.Abs(slow.Phases.Transfer.P50-want) > 0.02*want {
		t.Errorf("transfer p50 at 1 Gb/s %.1f ms, want %.1f (the KV over the link)", slow.Phases.Transfer.P50, want)
	}
	if d := slow.Stats.TTFT.P50 - fast.Stats.TTFT.P50; math.Abs(d-0.99*want) > 0.25*want {
		t.Errorf("TTFT p50 at 1 Gb/s minus at 100 Gb/s %.0f ms, want about %.0f", d, 0.99*want)
	}
	if g := slow.GPU; g == nil || len(g.GPUs) != 2 || !(g.EnergyJ > 0) {
		t.Errorf("a 1P1D prediction's energy: %+v, want both pools' two GPUs metered", g)
	}
	for _, r := range []*results.Run{slow, fast} {
		sum := 0.0
		for _, s := range r.Phases.All() {
			sum += s.Mean
		}
		if math.Abs(sum-r.Stats.TTFT.Mean) > 0.01*r.Stats.TTFT.Mean {
			t.Errorf("the phases' means add to %.1f ms, the TTFT mean is %.1f", sum, r.Stats.TTFT.Mean)
		}
	}
	poisson := pdLevel(t, 1, 1, 0.5, 1)
	load := 0.5 * want / 1000
	t.Logf("Poisson at 0.5/s: link %.0f%% loaded, transfer mean %.0f ms (processor sharing: %.0f)", 100*load, poisson.Phases.Transfer.Mean, want/(1-load))
	if poisson.Phases.Transfer.Mean < 1.2*want {
		t.Errorf("Poisson arrivals' transfers took %.0f ms on average, hardly more than one alone (%.0f): the link is not shared", poisson.Phases.Transfer.Mean, want)
	}
}

// The issue's own check, 1,000-token prompts at 1/s, holds where the link
// is not overloaded: one 1 Gb/s link would carry 1.05 Gb/s of KV and queue
// without end, so the prompts go round-robin to two decode replicas, each
// with its own link (half loaded, evenly spaced: no transfer overlaps).
func TestDisaggOneGbpsCostsASecondAtOnePerSecond(t *testing.T) {
	slow, fast := pdLevel(t, 2, 1, 1, 1000), pdLevel(t, 2, 100, 1, 1000)
	want := slow.Tokens.Input.P50 * 128 * 1024 * 8 / 1e9 * 1000 * 0.99
	d := slow.Stats.TTFT.Mean - fast.Stats.TTFT.Mean
	t.Logf("1P2D at 1/s: TTFT mean %.0f ms at 1 Gb/s, %.1f ms at 100 Gb/s: %.0f ms apart (formula %.0f)",
		slow.Stats.TTFT.Mean, fast.Stats.TTFT.Mean, d, want)
	if math.Abs(d-want) > 0.25*want {
		t.Errorf("TTFT mean at 1 Gb/s minus at 100 Gb/s %.0f ms, want %.0f ± 25%%", d, want)
	}
}
