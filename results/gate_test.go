package results

import (
	"strings"
	"testing"
)

// gateSweep is a sweep of levels at loads 1..n with the given TTFT p95s
// and error counts, its SLO knee at slo (0: none).
func gateSweep(p95 []float64, failed []int64, slo float64) *Sweep {
	s := &Sweep{Axis: "rate", Config: Config{Model: "m", Workload: WorkloadSynthetic, InputTokens: 100}}
	for i, v := range p95 {
		r := &Run{Stats: Stats{TTFTSched: Summary{Count: 100, P50: v / 2, P90: v, P95: v, P99: v}},
			Requests: Requests{OK: 100 - failed[i], Failed: failed[i]}, Health: Health{Verdict: VerdictHealthy}}
		s.Levels = append(s.Levels, Level{Load: float64(i + 1), Run: r})
	}
	if slo > 0 {
		s.Knees.SLO = &Knee{Load: slo}
	}
	return s
}

func TestGateChecks(t *testing.T) {
	base := gateSweep([]float64{100, 200, 400}, []int64{0, 0, 1}, 2)
	for _, c := range []struct {
		name   string
		cand   *Sweep
		rules  string
		passed bool
		want   []string // verdicts, in order
	}{
		{"itself", base, "ttft_sched.p95:+10%,errors:+0.5pp,slo_knee:-1 level", true,
			[]string{GateHolds, GateHolds, GateHolds, GateHolds, GateHolds, GateHolds, GateHolds}},
		{"slower past 10%", gateSweep([]float64{105, 230, 400}, []int64{0, 0, 1}, 2), "ttft_sched.p95:+10%", false,
			[]string{GateHolds, GateFails, GateHolds}},
		{"absolute ms", gateSweep([]float64{105, 230, 400}, []int64{0, 0, 1}, 2), "ttft_sched.p95:+30ms", true,
			[]string{GateHolds, GateHolds, GateHolds}},
		{"errors in points", gateSweep([]float64{100, 200, 400}, []int64{0, 1, 2}, 2), "errors:+0.5pp", false,
			[]string{GateHolds, GateFails, GateFails}},
		{"knee one level down", gateSweep([]float64{100, 200, 400}, []int64{0, 0, 1}, 1), "slo_knee:-1 level", true, []string{GateHolds}},
		{"knee gone", gateSweep([]float64{100, 200, 400}, []int64{0, 0, 1}, 0), "slo_knee:-1 level", false, []string{GateFails}},
	} {
		rules, err := ParseGateRules(c.rules)
		if err != nil {
			t.Fatal(err)
		}
		g := Gate(base, c.cand, rules)
		var got []string
		for _, ch := range g.Checks {
			got = append(got, ch.Verdict)
		}
		if g.Passed != c.passed || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: passed %v, verdicts %v; want %v, %v", c.name, g.Passed, got, c.passed, c.want)
		}
	}
}

// TestGateUnjudged: a level whose client was unhealthy in either file
// is not judged, and fails the gate.
func TestGateUnjudged(t *testing.T) {
	base := gateSweep([]float64{100, 200}, []int64{0, 0}, 2)
	cand := gateSweep([]float64{100, 200}, []int64{0, 0}, 2)
	cand.Levels[1].Run.Health.Verdict = VerdictClientLimited
	g := Gate(base, cand, []GateRule{{Text: "r", Figure: "ttft_sched.p95", Allowed: 10, Unit: "%"}})
	if g.Passed || g.Checks[1].Verdict != GateUnjudged || !strings.Contains(g.Checks[1].Why, "client-limited") {
		t.Errorf("%+v", g)
	}
}

// TestGateKneeRange: a knee's rule with repeats fails only when the
// candidate's best repeat fell past the baseline's worst.
func TestGateKneeRange(t *testing.T) {
	at := func(v float64) *float64 { return &v }
	base := gateSweep([]float64{1, 1, 1, 1}, []int64{0, 0, 0, 0}, 4)
	base.Repeats = &SweepRepeats{SLO: KneesAcross{Loads: []*float64{at(4), at(3), at(4)}}}
	cand := gateSweep([]float64{1, 1, 1, 1}, []int64{0, 0, 0, 0}, 2)
	cand.Repeats = &SweepRepeats{SLO: KneesAcross{Loads: []*float64{at(2), at(2), at(2)}}}
	rules, _ := ParseGateRules("slo_knee:-1 level")
	if g := Gate(base, cand, rules); g.Checks[0].Verdict != GateInconclusive {
		t.Errorf("knee 4 (worst 3) to 2: %+v, want inconclusive", g.Checks[0])
	}
	cand.Repeats.SLO.Loads[1] = at(1)
	base.Repeats.SLO.Loads[1] = at(4)
	if g := Gate(base, cand, rules); g.Checks[0].Verdict != GateFails {
		t.Errorf("knee 4 (every repeat) to 2 (best 2): %+v, want fails", g.Checks[0])
	}
}

func FuzzParseGateRules(f *testing.F) {
	for _, s := range []string{"ttft_sched.p95:+10%", "throughput:-5%,slo_knee:-1 level", "errors:+0.5pp", "e2e.p99:+20ms", ":+%", "a:+1e309%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseGateRules(s)
		if err == nil && len(rules) == 0 {
			t.Errorf("%q: no rules and no error", s)
		}
	})
}

// TestGateInconclusive: the case: three repeats, every candidate
// repeat 3–9× the baseline's (TTFT sched p95 32–37 ms against 120–231
// ms), an interval of the difference wider than the move past the
// allowance. The gate neither holds nor passes: it is undecided, says by
// how much and how many repeats would decide it.
func TestGateInconclusive(t *testing.T) {
	repeated := func(values []float64) *Sweep {
		s := gateSweep([]float64{mean(values)}, []int64{0}, 0)
		rp := &Repeats{Count: len(values)}
		for i, v := range values {
			rp.Each = append(rp.Each, RepeatFigures{Seed: uint64(i + 1), Figures: map[string]float64{"ttft_sched.p95": v}})
		}
		s.Levels[0].Run.Repeats = rp
		return s
	}
	base, cand := repeated([]float64{32, 35, 37}), repeated([]float64{120, 231, 130})
	rules, err := ParseGateRules("ttft_sched.p95:+10%")
	if err != nil {
		t.Fatal(err)
	}
	g := Gate(base, cand, rules)
	c := g.Checks[0]
	if g.Passed || !g.Inconclusive || c.Verdict != GateInconclusive || !strings.Contains(c.Why, "repeats each would decide it") {
		t.Errorf("passed %v, inconclusive %v, %+v", g.Passed, g.Inconclusive, c)
	}
	if g := Gate(base, base, rules); !g.Passed || g.Inconclusive {
		t.Errorf("against itself: passed %v, inconclusive %v", g.Passed, g.Inconclusive)
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
