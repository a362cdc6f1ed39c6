package predict

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/workload"
)

// TestMemoryGuardStopsALevel: a level whose heap outgrows its budget
// stops, what it predicted kept and marked interrupted, with a warning
// that says why, instead of dying of memory.
func TestMemoryGuardStopsALevel(t *testing.T) {
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	stopped := false
	v := &Virtual{Target: target, MemoryBudget: 1 << 20, OutOfMemory: func() { stopped = true }}
	res, err := v.Run(context.Background(), requestsLevel(workload.Synthetic{Tokens: 256, MaxTokens: 64, Seed: 1},
		driver.Load{Rate: 50, Burstiness: 1, Duration: time.Hour, Seed: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if !stopped || !res.Interrupted {
		t.Fatalf("a level past its budget ran on: stopped %v, interrupted %v", stopped, res.Interrupted)
	}
	if res.Requests.OK == 0 || res.Requests.OK >= 50*3600 {
		t.Errorf("completed %d: want what it predicted before it stopped", res.Requests.OK)
	}
	if len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, " "), ErrOutOfMemory.Error()) {
		t.Errorf("no warning says why it stopped: %q", res.Warnings)
	}
}

// TestLevelsCheckSaysWhatFits: levels are refused by the memory their
// requests need (22 bytes a token and 3,000 besides), before any runs, with
// the change that would fit; what fits passes.
func TestLevelsCheckSaysWhatFits(t *testing.T) {
	const budget = 1 << 30 // 1 GiB: 1,073,741,824 / (3,000 + 22×512) = 75,276 requests of 512 tokens
	cases := []struct {
		name string
		spec LevelsSpec
		want string // "" passes
	}{
		{"fits", LevelsSpec{Axis: "rate", Loads: []float64{100}, Window: 10 * time.Minute, Tokens: 512}, ""},
		{"480,000 requests", LevelsSpec{Axis: "rate", Loads: []float64{8000}, Window: time.Minute, Tokens: 512},
			"about 480,000 requests: 1.0 GB of memory for predictions (the budget given) holds about 75,276 requests of 512 tokens a level; shorten --duration to 9s or less"},
		{"two at once", LevelsSpec{Axis: "rate", Loads: []float64{1000, 1000}, Window: time.Minute, Tokens: 512, Parallel: 2},
			"2 levels at once (--parallel) holds about 37,638 requests of 512 tokens a level; shorten --duration to 37s or less, or lower --parallel"},
		{"by count", LevelsSpec{Axis: "rate", Loads: []float64{1}, Requests: 200_000, Tokens: 512}, "give --requests 75276 or fewer"},
		{"plan's window", LevelsSpec{Axis: "rate", Loads: []float64{2000}, Window: time.Minute, Tokens: 512, WindowFlag: "--window"}, "shorten --window to"},
		{"streams", LevelsSpec{Axis: "concurrency", Loads: []float64{95_000}, Window: time.Minute, Tokens: 512}, "fewer than its streams hold at once"},
		{"too many streams", LevelsSpec{Axis: "concurrency", Loads: []float64{100_001}, Window: time.Minute, Tokens: 8}, "at most 100000 streams"},
		{"long requests", LevelsSpec{Axis: "rate", Loads: []float64{10}, Window: 10 * time.Minute, Tokens: 100_000}, "requests of 100000 tokens"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.spec.Budget = budget
			err := c.spec.Check()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestMaxPlanLoadIsMemorys: a plan searches no load its memory cannot
// predict in one window.
func TestMaxPlanLoadIsMemorys(t *testing.T) {
	got := MaxPlanLoad("rate", time.Minute, 512, 1, 1<<30)
	if want := 75276.0 / 60; got < want-1 || got > want+1 {
		t.Errorf("rate: %g, want about %g", got, want)
	}
	if got := MaxPlanLoad("concurrency", time.Minute, 8, 1, 1<<40); got != maxPlanLoad {
		t.Errorf("a vast budget: %g, want the fixed bound %d", got, maxPlanLoad)
	}
}

// TestOneLevelBudgetsForOne: a single level is budgeted the whole memory,
// whatever --parallel says: no level shares it.
func TestOneLevelBudgetsForOne(t *testing.T) {
	const budget = 1 << 30
	fit := RequestsThatFit(512, 1, budget)
	one := LevelsSpec{Axis: "rate", Loads: []float64{fit * 0.6 / 60}, Window: time.Minute, Tokens: 512, Parallel: 8, Budget: budget}
	if err := one.Check(); err != nil {
		t.Errorf("one level refused for levels that do not exist: %v", err)
	}
	two := one
	two.Loads = []float64{one.Loads[0], one.Loads[0]}
	if err := two.Check(); err == nil {
		t.Error("two levels at once, each over half the memory, were not refused")
	}
}
