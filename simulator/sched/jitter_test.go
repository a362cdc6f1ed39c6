package sched

import (
	"math"
	"slices"
	"testing"
)

// durations runs n identical single-sequence decodes on a core and
// returns each step's duration.
func durations(c *Core, steps int) []float64 {
	c.Add(Request{ID: 1, PromptLen: 16, OutputLen: steps})
	var d []float64
	for now := 0.0; !c.Idle(); {
		st := c.Step(now)
		d = append(d, st.Duration)
		now = st.End
	}
	return d
}

func TestStepTimeJitter(t *testing.T) {
	cfg := baseConfig(100000, 8192, 8)
	plain := durations(New(cfg), 2000)
	cfg.StepTimeCV = 0.1
	for _, c := range []struct {
		name         string
		a, b         *Core
		same         bool
		checkMoments bool
	}{
		{"one seed and replica repeat", NewReplica(cfg, 7, 1), NewReplica(cfg, 7, 1), true, true},
		{"replicas differ", NewReplica(cfg, 7, 1), NewReplica(cfg, 7, 2), false, false},
		{"seeds differ", NewReplica(cfg, 7, 1), NewReplica(cfg, 8, 1), false, false},
	} {
		a, b := durations(c.a, 2000), durations(c.b, 2000)
		if slices.Equal(a, b) != c.same {
			t.Errorf("%s: equal %v, want %v", c.name, !c.same, c.same)
		}
		if !c.checkMoments {
			continue
		}
		// Every step but the first (the prompt's) is the same decode: the
		// ratios to the plain core's are the draws.
		var sum, sq float64
		n := float64(len(a) - 1)
		for i := 1; i < len(a); i++ {
			r := a[i] / plain[i]
			sum += r
			sq += r * r
		}
		mean := sum / n
		cv := math.Sqrt(sq/n-mean*mean) / mean
		if math.Abs(mean-1) > 0.01 || math.Abs(cv-0.1) > 0.01 {
			t.Errorf("%s: step time scaled by mean %.4f, CV %.4f; want 1 and 0.1", c.name, mean, cv)
		}
	}
	cfg.StepTimeCV = 0
	if !slices.Equal(durations(NewReplica(cfg, 7, 3), 200), plain[:len(durations(New(cfg), 200))]) {
		t.Error("with no CV a replica's steps differ from the cost model's")
	}
}

func TestStepTimeCVValidated(t *testing.T) {
	for _, cv := range []float64{-0.1, 1.5, math.NaN(), math.Inf(1)} {
		cfg := baseConfig(100, 8192, 8)
		cfg.StepTimeCV = cv
		if cfg.Validate() == nil {
			t.Errorf("step_time_cv %v accepted", cv)
		}
	}
}
