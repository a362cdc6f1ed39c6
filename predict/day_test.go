package predict

import (
	"math"
	"testing"
	"time"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// stepDay is 10 minutes at 5/s, then 20 at 25/s (or back to 5/s at
// back, when set).
func stepDay(back time.Duration) workload.RateCurve {
	c := workload.RateCurve{Steps: []workload.RateStep{{At: 0, Rate: 5}, {At: 600 * time.Second, Rate: 25}}, End: 1800 * time.Second}
	if back > 0 {
		c.Steps = append(c.Steps, workload.RateStep{At: back, Rate: 5})
	}
	return c
}

// tenPerReplica is a replica meeting the SLO up to 10/s and completing
// at most 12/s.
var tenPerReplica = ReplicaCurve{Capacity: 10, Saturation: 12, Points: []CurvePoint{
	{Load: 2.5, Waiting: 0, Slack: 0.8}, {Load: 5, Waiting: 0.1, Slack: 0.6}, {Load: 10, Waiting: 1, Slack: 0}, {Load: 12, Waiting: 8, Slack: -1}}}

// TestDayScalingLag holds the day's arithmetic on a step in the rate:
// seen one interval late, served one load delay after, and the queue
// built meanwhile drained at the fleet's spare rate.
func TestDayScalingLag(t *testing.T) {
	p := Policy{Target: TargetUtilisation, Value: 1, Delay: 2 * time.Minute, Cooldown: 5 * time.Minute, Interval: 15 * time.Second, Min: 1, Max: 10}
	got := SimulateDay(stepDay(0), tenPerReplica, p, 2, 3)
	// The rate steps at 600 s; the policy sees it at 615 (its interval)
	// and asks for 3; they serve at 735. The one replica completes 12/s of
	// 25 for 135 s: 1,755 queued, drained at 36−25 = 11/s: 160 s more.
	want := map[string]float64{results.MissScalingLag: 15 * 25, results.MissColdStart: 120 * 25, results.MissBacklog: 160 * 25}
	for k, v := range want {
		if math.Abs(got.MissedBy[k]-v) > 1e-6 {
			t.Errorf("missed by %s = %g, want %g (all: %v)", k, got.MissedBy[k], v, got.MissedBy)
		}
	}
	if len(got.MissedBy) != len(want) {
		t.Errorf("missed by %v, want only %v", got.MissedBy, want)
	}
	arrived := 600*5 + 1200*25.0
	if a := 1 - 295*25/arrived; math.Abs(got.Attainment-a) > 1e-12 {
		t.Errorf("attainment %g, want %g", got.Attainment, a)
	}
	if got.Minutes != 30 || got.MinutesMet != 25 || got.ScaleUps != 1 || got.ScaleDowns != 0 || got.PeakReplicas != 3 {
		t.Errorf("minutes %d met %d, scale-ups %d downs %d, peak %d: want 30, 25, 1, 0, 3", got.Minutes, got.MinutesMet, got.ScaleUps, got.ScaleDowns, got.PeakReplicas)
	}
	spans := []results.MissedSpan{{From: 10, To: 11, Reason: results.MissColdStart, Requests: 120 * 25}, {From: 12, To: 14, Reason: results.MissBacklog, Requests: 175 * 25}}
	if len(got.Missed) != len(spans) {
		t.Fatalf("missed spans %+v, want %+v", got.Missed, spans)
	}
	for i, s := range spans {
		if g := got.Missed[i]; g.From != s.From || g.To != s.To || g.Reason != s.Reason || math.Abs(g.Requests-s.Requests) > 1e-6 {
			t.Errorf("span %d = %+v, want %+v", i, g, s)
		}
	}
	if m := got.Timeline[14]; math.Abs(m.Attainment-5.0/60) > 1e-12 || m.Replicas != 3 {
		t.Errorf("minute 14: %+v, want 5 of 60 seconds met on 3 replicas", m)
	}
	// 615 s of one replica, 1,185 s of three (two of them loading for
	// 120), two GPUs each at $3 an hour.
	if h := (615 + 3*1185.0) * 2 / 3600; math.Abs(got.GPUHours-h) > 1e-9 || math.Abs(got.Cost-3*h) > 1e-9 {
		t.Errorf("GPU-hours %g cost %g, want %g and %g", got.GPUHours, got.Cost, h, 3*h)
	}
}

// TestDayCooldown holds the scale-down: not before the cooldown since the
// last scaling, and not below the most asked for within it.
func TestDayCooldown(t *testing.T) {
	p := Policy{Target: TargetUtilisation, Value: 1, Delay: 0, Cooldown: 5 * time.Minute, Interval: 15 * time.Second, Min: 1, Max: 10}
	got := SimulateDay(stepDay(1200*time.Second), tenPerReplica, p, 1, 0)
	// Asked for 3 up to the look at 1,200 s (it saw 25/s); 1 from 1,215:
	// the most asked within 300 s is 3 until 1,500.
	if got.ScaleDowns != 1 || got.Timeline[24].Replicas != 3 || got.Timeline[25].Replicas != 1 {
		t.Errorf("scale-downs %d; replicas at minutes 24, 25: %d, %d; want 1 scale-down at 1,500 s (3, then 1)",
			got.ScaleDowns, got.Timeline[24].Replicas, got.Timeline[25].Replicas)
	}
	static := SimulateDay(stepDay(1200*time.Second), tenPerReplica, StaticPolicy(3), 1, 0)
	if static.Attainment != 1 || static.ScaleUps != 0 || math.Abs(static.GPUHours-3*1800.0/3600) > 1e-9 {
		t.Errorf("static 3: attainment %g, scale-ups %d, GPU-hours %g; want 1, 0, 1.5", static.Attainment, static.ScaleUps, static.GPUHours)
	}
}

// TestPolicyTargets holds what each target asks for.
func TestPolicyTargets(t *testing.T) {
	for _, tc := range []struct {
		policy        string
		rate, backlog float64
		want          int
	}{
		{"utilisation=0.5", 25, 0, 5},
		{"utilisation=1", 25, 0, 3},
		{"slo-margin=0.6", 25, 0, 5}, // slack 0.6 at 5/s a replica
		{"slo-margin=30%", 25, 0, 4}, // slack 0.3 at 7.5/s
		{"queue=1", 25, 0, 3},        // 8.33/s: 0.1+0.9×3.33/5 = 0.7 waiting
		{"queue=1", 25, 30, 10},      // 30 queued: 3 waiting apiece at 10
		{"queue=0.5,max=4", 25, 0, 4},
		{"utilisation=1,min=2", 1, 0, 2},
	} {
		p, err := ParsePolicy(tc.policy, Policy{Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.desired(tenPerReplica, tc.rate, tc.backlog); got != tc.want {
			t.Errorf("%s at %g/s, %g queued: %d replicas, want %d", tc.policy, tc.rate, tc.backlog, got, tc.want)
		}
	}
}

// TestParsePolicyErrors holds the refusals.
func TestParsePolicyErrors(t *testing.T) {
	for _, s := range []string{"", "delay=1m", "utilisation=0", "utilisation=1.5", "utilisation=NaN", "queue=-1", "slo-margin=1",
		"utilisation=0.8,delay=-1m", "utilisation=0.8,min=5,max=2", "utilisation=0.8,fast=yes", "delay=1m,utilisation=0.8", "utilisation=0.8,interval=1500ms", "utilisation"} {
		if _, err := ParsePolicy(s, Policy{Max: 10}); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}
