package workload

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// gapStats returns the mean gap (s) and the coefficient of variation of the
// gaps of a schedule.
func gapStats(offsets []time.Duration) (mean, cv float64) {
	n := len(offsets) - 1
	var sum, sq float64
	for i := 1; i <= n; i++ {
		g := (offsets[i] - offsets[i-1]).Seconds()
		sum += g
		sq += g * g
	}
	mean = sum / float64(n)
	variance := sq/float64(n) - mean*mean
	return mean, math.Sqrt(variance) / mean
}

// TestScheduleStatistics draws 20,000 gaps per case. The sample mean of n
// exponential gaps has relative standard error 1/√n ≈ 0.7%, and that of a
// gamma with shape k 1/√(kn); a 3% band is over four standard errors for
// every case. The coefficient of variation of gamma gaps is 1/√k (1 for
// Poisson), checked within 5%.
func TestScheduleStatistics(t *testing.T) {
	cases := []struct{ rate, burstiness float64 }{
		{10, 1}, {500, 1}, {10, 0.5}, {10, 4}, {2, 0.25},
	}
	for _, tc := range cases {
		offs, err := Schedule(tc.rate, tc.burstiness, 42, 20001)
		if err != nil {
			t.Fatal(err)
		}
		mean, cv := gapStats(offs)
		if rel := math.Abs(mean*tc.rate - 1); rel > 0.03 {
			t.Errorf("rate %v burstiness %v: mean gap %.5f s, want %.5f ±3%%", tc.rate, tc.burstiness, mean, 1/tc.rate)
		}
		wantCV := 1 / math.Sqrt(tc.burstiness)
		if rel := math.Abs(cv/wantCV - 1); rel > 0.05 {
			t.Errorf("rate %v burstiness %v: CV %.3f, want %.3f ±5%%", tc.rate, tc.burstiness, cv, wantCV)
		}
		if offs[0] != 0 {
			t.Errorf("first arrival at %v, want 0", offs[0])
		}
		if !slices.IsSorted(offs) {
			t.Error("offsets are not increasing")
		}
	}
}

func TestScheduleDeterministic(t *testing.T) {
	a, _ := Schedule(7, 0.7, 99, 500)
	b, _ := Schedule(7, 0.7, 99, 500)
	c, _ := Schedule(7, 0.7, 100, 500)
	if !slices.Equal(a, b) {
		t.Error("same seed gave different schedules")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same schedule")
	}
}

func TestScheduleRejectsBadInput(t *testing.T) {
	for _, tc := range []struct{ rate, b float64 }{{0, 1}, {-1, 1}, {math.Inf(1), 1}, {1, 0}, {1, math.NaN()}} {
		if _, err := NewArrivals(tc.rate, tc.b, 1); err == nil {
			t.Errorf("NewArrivals(%v, %v) accepted", tc.rate, tc.b)
		}
	}
}

func TestSyntheticPromptsDifferAndRepeat(t *testing.T) {
	s := Synthetic{Tokens: 64, MaxTokens: 8, Seed: 3}
	a, b := s.Request(0).Messages[0].Content, s.Request(1).Messages[0].Content
	if a == b || strings.Fields(a)[0]+strings.Fields(a)[1] == strings.Fields(b)[0]+strings.Fields(b)[1] && strings.Fields(a)[2] == strings.Fields(b)[2] {
		t.Errorf("prompts 0 and 1 start alike: %.40q / %.40q", a, b)
	}
	if s.Request(0).Messages[0].Content != a {
		t.Error("the same index gave a different prompt")
	}
	if n := len(strings.Fields(a)); n != 64 {
		t.Errorf("prompt has %d words, want 64", n)
	}
}

// TestPromptsShareNoPrefix: across a thousand requests of each of three
// runs (or levels), no two prompts share their first three words, so on a
// server that caches token by token they share a word or two at most, and
// never a block.
func TestPromptsShareNoPrefix(t *testing.T) {
	seen := map[string]int{}
	for _, nonce := range []string{"[a1.1]", "[a1.2]", "[b2.1]"} {
		s := Synthetic{Tokens: 32, MaxTokens: 8, Seed: 1, Nonce: nonce}
		for i := -1; i < 1000; i++ {
			head := strings.Join(strings.Fields(s.Request(i).Messages[0].Content)[:3], " ")
			if j, dup := seen[head]; dup {
				t.Fatalf("request %d of %s starts like request %d: %q", i, nonce, j, head)
			}
			seen[head] = i
		}
	}
	// A warm-up or probe copy never shares a prefix with the request.
	r := Synthetic{Tokens: 8, MaxTokens: 1, Seed: 1}.Request(0)
	u := Unmeasured(r, "[knee warm-up 0]")
	if u.Messages[0].Content[0] == r.Messages[0].Content[0] || r.Messages[0].Content == u.Messages[0].Content {
		t.Errorf("warm-up %q shares the start of %q", u.Messages[0].Content, r.Messages[0].Content)
	}
}

// TestPhase checks that phases of one arrival process take its arrivals in
// order, each rebased to its own first, bounded by count or span, and that
// the arrival found past a span is lost to the next phase.
func TestPhase(t *testing.T) {
	all, err := Schedule(10, 1, 3, 40)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := NewArrivals(10, 1, 3)
	drain := func(p *Phase) []time.Duration {
		var got []time.Duration
		for {
			off, ok := p.Next()
			if !ok {
				return got
			}
			got = append(got, off)
		}
	}
	warm := drain(a.Phase(5, 0))
	span := all[20] - all[5] // the window ends before arrival 20
	window := drain(a.Phase(0, span))
	next := drain(a.Phase(3, 0))
	if len(warm) != 5 || len(window) != 15 || len(next) != 3 {
		t.Fatalf("phases of %d, %d, %d arrivals, want 5, 15, 3", len(warm), len(window), len(next))
	}
	for i, off := range warm {
		if off != all[i] {
			t.Errorf("warm-up arrival %d at %v, want %v", i, off, all[i])
		}
	}
	for i, off := range window {
		if want := all[5+i] - all[5]; off != want {
			t.Errorf("window arrival %d at %v, want %v (rebased)", i, off, want)
		}
	}
	// Arrival 20 fell past the window and was drawn by it: the next phase
	// starts at 21.
	for i, off := range next {
		if want := all[21+i] - all[21]; off != want {
			t.Errorf("next phase arrival %d at %v, want %v", i, off, want)
		}
	}
}

// TestPrefixPool: each request starts with one of the pool's prefixes,
// whole, and goes on with text of its own; every prefix is used.
func TestPrefixPool(t *testing.T) {
	s := Synthetic{Tokens: 10, MaxTokens: 4, Seed: 5, Nonce: "[x]", Prefix: Pool{Tokens: 20, Count: 3}}
	starts := map[string]int{}
	for i := 0; i < 300; i++ {
		w := strings.Fields(s.Request(i).Messages[0].Content)
		if len(w) != 30 {
			t.Fatalf("request %d has %d words, want 20 + 10", i, len(w))
		}
		starts[strings.Join(w[:20], " ")]++
		if i > 0 && strings.Join(w[20:23], " ") == strings.Join(strings.Fields(s.Request(i - 1).Messages[0].Content)[20:23], " ") {
			t.Errorf("requests %d and %d go on alike after the prefix", i-1, i)
		}
	}
	if len(starts) != 3 {
		t.Errorf("%d distinct prefixes, want 3", len(starts))
	}
	for p, n := range starts {
		if n < 70 {
			t.Errorf("prefix %.20q used %d times of 300", p, n)
		}
	}
}
