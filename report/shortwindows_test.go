package report

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestShortWindowsSaidOnce: warnings a longer window answers are said in
// one line when two or more levels give them, with the longest window
// asked for; one such warning, and every other warning, stays its own
// line.
func TestShortWindowsSaidOnce(t *testing.T) {
	few := "the latency percentiles rest on 9 requests: with fewer than 20, p95 and p99 are the largest values seen; measure longer"
	long := "the window (15s) is under 3 times the longest requests (E2E p99 15.5 s): those straddling its edges weigh on its throughput, and a queue that builds slowly may not show yet; a window of at least 47s reads this level reliably"
	other := "the server dropped 3 connections"
	sweep := func(warnings ...[]string) *results.Sweep {
		s := &results.Sweep{Axis: "rate", Config: results.Config{DurationS: 15}}
		for i, w := range warnings {
			s.Levels = append(s.Levels, results.Level{Load: float64(i + 1), Run: &results.Run{Warnings: w}})
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		s         *results.Sweep
		want, not []string
	}{
		{"two levels", sweep([]string{few, other}, []string{long}),
			[]string{"short windows", "few requests at 1/s", "long against the window at 2/s", "--duration 47s", "warning 1/s", other},
			[]string{"rest on 9 requests", "straddling"}},
		{"one warning", sweep([]string{few}),
			[]string{"warning 1/s", "rest on 9 requests"}, []string{"short windows"}},
	} {
		var b strings.Builder
		LevelWarnings(&b, tc.s)
		got := strings.Join(strings.Fields(b.String()), " ")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: missing %q in\n%s", tc.name, w, b.String())
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q said again in\n%s", tc.name, w, b.String())
			}
		}
	}
}

// TestRepeatKneesDisagreementSaid: pooled levels that reach no SLO knee
// where the repeats found one say so, and which to plan on; agreeing
// knees say nothing more.
func TestRepeatKneesDisagreementSaid(t *testing.T) {
	eight := 8.0
	s := &results.Sweep{Axis: "rate", Knees: results.Knees{SLONotReached: true, SLO: &results.Knee{Load: 16}},
		Repeats: &results.SweepRepeats{Count: 3, Passes: 3, SLO: results.KneesAcross{Loads: []*float64{&eight, &eight, &eight}, Low: &eight, High: &eight}}}
	var b strings.Builder
	repeatKnees(&b, s, "/s")
	if !strings.Contains(b.String(), "The pooled levels reach no SLO knee where the repeats found one (from 8/s)") {
		t.Errorf("no word of the disagreement:\n%s", b.String())
	}
	s.Knees = results.Knees{SLO: &results.Knee{Load: 8}}
	b.Reset()
	repeatKnees(&b, s, "/s")
	if strings.Contains(b.String(), "pooled levels") && strings.Contains(b.String(), "Plan on") {
		t.Errorf("agreeing knees said to disagree:\n%s", b.String())
	}
}

// TestPlanLimitInAWord: the plan page names what limits a replica in a
// word and keeps its sentence for the hover, so the costs stay in view.
func TestPlanLimitInAWord(t *testing.T) {
	p := &results.Plan{Target: 10, Rows: []results.PlanRow{{Config: "h100x1/m", Replicas: 1, GPUs: 1, Meets: true,
		Limit: "compute", LimitDetail: "98% of the time of steps carrying a prefill chunk bound by compute"}}}
	row := planSection(p).Table.Rows[0]
	if row.Cells[planLimitCell] != "compute" || !strings.Contains(row.Title(planLimitCell), "98% of the time") {
		t.Errorf("limit cell %q, title %q", row.Cells[planLimitCell], row.Title(planLimitCell))
	}
}
