package results

import "testing"

// TestClassKnees: a class's knee is its last met load before its first
// miss; a class no level judged (it finished no request) has no knee and
// says so by Judged 0, not by a miss; the class that missed first
// degraded first.
func TestClassKnees(t *testing.T) {
	met := func(v *bool) *Run {
		n := int64(10)
		if v == nil {
			n = 0
		}
		return &Run{Requests: Requests{OK: n}, MixClass: &MixClass{SLO: "ttft_p95:300", MetSLO: v}}
	}
	yes, no := true, false
	s := &Sweep{}
	for i, c := range []struct{ a, b, rare *bool }{{&yes, &yes, nil}, {&yes, &no, nil}, {&no, &no, nil}} {
		s.Levels = append(s.Levels, Level{Load: float64(i + 1),
			Run: &Run{Classes: map[string]*Run{"a": met(c.a), "b": met(c.b), "rare": met(c.rare)}}})
	}
	s.findClassKnees()
	want := map[string]struct {
		knee, missed float64
		judged       int
	}{"a": {2, 3, 3}, "b": {1, 2, 2}, "rare": {0, 0, 0}}
	if len(s.ClassKnees) != len(want) {
		t.Fatalf("class knees %+v", s.ClassKnees)
	}
	for _, ck := range s.ClassKnees {
		w := want[ck.Class]
		knee, missed := 0.0, 0.0
		if ck.Knee != nil {
			knee = ck.Knee.Load
		}
		if ck.FirstMissed != nil {
			missed = *ck.FirstMissed
		}
		if knee != w.knee || missed != w.missed || ck.Judged != w.judged {
			t.Errorf("class %s: knee %g, first missed %g, judged %d; want %g, %g, %d", ck.Class, knee, missed, ck.Judged, w.knee, w.missed, w.judged)
		}
	}
	if s.DegradedFirst != "b" {
		t.Errorf("degraded first %q, want b", s.DegradedFirst)
	}
}
