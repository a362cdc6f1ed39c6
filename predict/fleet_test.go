package predict

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// voiceFleet predicts calls at rate on four H100 8B replicas behind the
// routing policy.
func voiceFleet(t testing.TB, routing Routing, rate float64) *results.Run {
	t.Helper()
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	v := workload.Voice{SystemPromptTokens: 4000, UserTokens: 40, Turns: 4, GapMin: 2 * time.Second, GapMax: 3 * time.Second, OutputTokens: 60, Seed: 5}
	cal := bench.Calibrate(target)
	v.WordsPerToken = cal.WordsPerToken
	r, err := (&Virtual{Target: target, Replicas: 4, Routing: routing}).Run(context.Background(),
		&bench.Level{Work: bench.Calls{Source: v, Load: driver.CallLoad{Rate: rate, Duration: time.Minute, Seed: 5, DrainTimeout: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPrefixAffinityKeepsCallsWarm: behind round-robin a call's next turn
// lands on another replica three times in four, where its 4,000-token
// system prompt is cold; prefix affinity keeps every call on the replica
// that holds its prefix. The hit rate is at least round-robin's, by far,
// and TTFT falls with it.
func TestPrefixAffinityKeepsCallsWarm(t *testing.T) {
	rr, pa := voiceFleet(t, RoundRobin, 4), voiceFleet(t, PrefixAffinity, 4)
	t.Logf("round-robin:     hit rate %.3f, cold turns %.1f%%, TTFT p50 %.1f ms p95 %.1f ms", rr.Cache.HitRate, 100*rr.Cache.ColdShare, rr.Stats.TTFT.P50, rr.Stats.TTFT.P95)
	t.Logf("prefix-affinity: hit rate %.3f, cold turns %.1f%%, TTFT p50 %.1f ms p95 %.1f ms", pa.Cache.HitRate, 100*pa.Cache.ColdShare, pa.Stats.TTFT.P50, pa.Stats.TTFT.P95)
	if rr.Requests.Sent != pa.Requests.Sent || rr.Calls.Started != pa.Calls.Started {
		t.Fatalf("the policies were offered different loads: %d and %d turns", rr.Requests.Sent, pa.Requests.Sent)
	}
	if pa.Cache.HitRate < rr.Cache.HitRate {
		t.Errorf("prefix affinity hit rate %.3f below round-robin's %.3f", pa.Cache.HitRate, rr.Cache.HitRate)
	}
	// Round-robin: a turn finds its prefix only when it lands where the
	// call's last turn ran, about one time in four.
	if pa.Cache.HitRate < 0.9 || rr.Cache.HitRate > 0.5 {
		t.Errorf("hit rates %.3f (affinity) and %.3f (round-robin): want above 0.9 and below 0.5", pa.Cache.HitRate, rr.Cache.HitRate)
	}
	if pa.Stats.TTFT.P50 >= rr.Stats.TTFT.P50 {
		t.Errorf("TTFT p50 %.1f ms with affinity, %.1f ms round-robin: warm prefixes should answer sooner", pa.Stats.TTFT.P50, rr.Stats.TTFT.P50)
	}
}

// TestReplicasMoveTheKnee: a rate that saturates one replica is served by
// four, whatever the policy that spreads load.
func TestReplicasMoveTheKnee(t *testing.T) {
	target := presetTarget(t, "l4/llama-3.1-8b")
	level := func(replicas int, routing Routing) *results.Run {
		r, err := (&Virtual{Target: target, Replicas: replicas, Routing: routing}).Run(context.Background(), requestsLevel(
			workload.Synthetic{Tokens: 1024, MaxTokens: 128, Seed: 2}, driver.Load{Rate: 6, Burstiness: 1, Duration: time.Minute, Seed: 2, DrainTimeout: time.Minute}))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one := level(1, RoundRobin)
	t.Logf("1 replica: completion %.2f/s of %.2f offered, TTFT p95 %.0f ms", one.Arrivals.CompletionRate, one.Arrivals.OfferedRate, one.Stats.TTFT.P95)
	if one.Arrivals.CompletionRate > 0.9*one.Arrivals.OfferedRate {
		t.Fatalf("one L4 kept up with %.1f/s: pick a higher rate for this test", one.Arrivals.OfferedRate)
	}
	for _, routing := range []Routing{RoundRobin, Random, LeastLoaded} {
		four := level(4, routing)
		t.Logf("4 replicas, %s: completion %.2f/s, TTFT p95 %.0f ms", routing, four.Arrivals.CompletionRate, four.Stats.TTFT.P95)
		if four.Arrivals.CompletionRate < 0.95*four.Arrivals.OfferedRate {
			t.Errorf("%s: four replicas fell behind (%.2f of %.2f/s)", routing, four.Arrivals.CompletionRate, four.Arrivals.OfferedRate)
		}
	}
}

// TestVoiceLevelNeedsABound: with neither a call count nor a duration the
// arrivals would never end; the prediction refuses, as a live run does.
func TestVoiceLevelNeedsABound(t *testing.T) {
	v := workload.Voice{SystemPromptTokens: 100, UserTokens: 10, Turns: 2, GapMin: time.Second, GapMax: time.Second, OutputTokens: 10, Seed: 1, WordsPerToken: 0.75}
	_, err := (&Virtual{Target: presetTarget(t, "h100-80gb/llama-3.1-8b")}).Run(context.Background(), &bench.Level{Work: bench.Calls{Source: v, Load: driver.CallLoad{Rate: 1}}})
	if !errors.Is(err, driver.ErrCallsUnbounded) {
		t.Fatalf("err %v, want driver.ErrCallsUnbounded", err)
	}
}

// TestRoutingPolicies: four H100 8B replicas at 80 requests/s of prompts
// and answers of widely spread lengths (uniform within ±90% of 1,000 and
// 200 tokens). Random routing piles work up by chance and has the worst
// tails; least-loaded (the fewest prompt tokens waiting, then the fewest
// requests, at random among equals) has tails no worse than round-robin's,
// which sends a long prompt where a short one went last.
func TestRoutingPolicies(t *testing.T) {
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	p95 := map[Routing]float64{}
	for _, routing := range []Routing{RoundRobin, Random, LeastLoaded} {
		r, err := (&Virtual{Target: target, Replicas: 4, Routing: routing}).Run(context.Background(), requestsLevel(
			workload.Synthetic{Tokens: 1000, MaxTokens: 200, Seed: 3, Spread: workload.Spread{RangeRatio: 0.9}},
			driver.Load{Rate: 80, Burstiness: 1, Duration: 2 * time.Minute, Seed: 3, DrainTimeout: time.Minute}))
		if err != nil {
			t.Fatal(err)
		}
		p95[routing] = r.Stats.TTFT.P95
		t.Logf("%-13s TTFT p50 %6.1f p95 %6.1f ms, TPOT p95 %5.1f ms", routing, r.Stats.TTFT.P50, r.Stats.TTFT.P95, r.Stats.TPOT.P95)
	}
	if !(p95[Random] > p95[RoundRobin] && p95[Random] > p95[LeastLoaded]) {
		t.Errorf("random's TTFT p95 %.1f ms is not the worst (round-robin %.1f, least-loaded %.1f)", p95[Random], p95[RoundRobin], p95[LeastLoaded])
	}
	if p95[LeastLoaded] > p95[RoundRobin] {
		t.Errorf("least-loaded's TTFT p95 %.1f ms above round-robin's %.1f", p95[LeastLoaded], p95[RoundRobin])
	}
}

// requestsLevel is a level of requests from src with load.
func requestsLevel(src workload.Source, load driver.Load) *bench.Level {
	return &bench.Level{Work: bench.Requests{Source: src, Load: load}}
}
