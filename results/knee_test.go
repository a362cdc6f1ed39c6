package results

import (
	"strings"
	"testing"
)

func pts(loads, lat []float64) []Point {
	out := make([]Point, len(loads))
	for i := range loads {
		out[i] = Point{Load: loads[i], Latency: lat[i]}
	}
	return out
}

func TestSLOKnee(t *testing.T) {
	cases := []struct {
		name   string
		points []Point
		want   int
		ok     bool
	}{
		{"convex", pts([]float64{1, 2, 3, 4, 5}, []float64{100, 120, 180, 400, 2000}), 2, true},
		{"never crosses", pts([]float64{1, 2, 3}, []float64{10, 20, 30}), 2, true},
		{"first fails", pts([]float64{1, 2}, []float64{500, 900}), -1, false},
		{"single passing level", pts([]float64{4}, []float64{250}), 0, true},
		{"lucky level past the knee", pts([]float64{1, 2, 3, 4}, []float64{100, 400, 250, 900}), 0, true},
		{"exactly at the SLO passes", pts([]float64{1, 2}, []float64{300, 301}), 0, true},
	}
	for _, tc := range cases {
		got, ok := SLOKnee(tc.points, 300, 0.02)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: SLOKnee = %d,%v; want %d,%v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	errs := pts([]float64{1, 2, 3}, []float64{100, 110, 120})
	errs[1].ErrorRate = 0.05
	if got, _ := SLOKnee(errs, 300, 0.02); got != 0 {
		t.Errorf("errors at level 2: knee %d, want 0", got)
	}
	unhealthy := pts([]float64{1, 2, 3}, []float64{100, 9000, 120})
	unhealthy[1].Excluded = true
	if got, _ := SLOKnee(unhealthy, 300, 0.02); got != 2 {
		t.Errorf("an excluded level must not stop the search: knee %d, want 2", got)
	}
}

// TestCurvatureKnee checks the Kneedle elbow against hand-computed answers.
// Convex curve: loads 1..5 normalise to 0, .25, .5, .75, 1; latencies
// 100, 110, 130, 200, 1000 to 0, .0111, .0333, .1111, 1; the differences
// are 0, .239, .467, .639, 0, so the knee is the fourth level (load 4).
func TestCurvatureKnee(t *testing.T) {
	cases := []struct {
		name   string
		points []Point
		want   int
		ok     bool
	}{
		{"convex", pts([]float64{1, 2, 3, 4, 5}, []float64{100, 110, 130, 200, 1000}), 3, true},
		// Noisy but convex: 50, 48, 55, 52, 60, 400, 3000 over loads 1..7.
		// Normalised latency of level 6 is (400−48)/2952 = .119 against a
		// load of 5/6 = .833: difference .714, the largest.
		{"noisy", pts([]float64{1, 2, 3, 4, 5, 6, 7}, []float64{50, 48, 55, 52, 60, 400, 3000}), 5, true},
		{"flat", pts([]float64{1, 2, 3, 4}, []float64{100, 100, 100, 100}), -1, false},
		// TTFT p95 41–42 ms at every level: the Kneedle maximum is noise.
		{"nearly flat", pts([]float64{1, 2, 4, 8, 16}, []float64{41.2, 41.9, 41.5, 42.0, 41.8}), -1, false},
		{"falling", pts([]float64{1, 2, 4, 8}, []float64{90, 70, 60, 55}), -1, false},
		// A spike in the middle, back to the base at the top: no knee.
		{"noise spike", pts([]float64{1, 2, 3, 4}, []float64{40, 80, 42, 41}), -1, false},
		// A queueing curve shaped like the main job's (TTFT sched p95, ms): the
		// normalised differences peak at load 12 (.733 − .207 = .526).
		{"queueing", pts([]float64{1, 2, 3, 4, 6, 8, 12, 16}, []float64{38, 40, 44, 52, 75, 130, 900, 4200}), 6, true},
		{"straight line", pts([]float64{1, 2, 3}, []float64{10, 20, 30}), -1, false},
		{"single level", pts([]float64{1}, []float64{10}), -1, false},
		{"two levels", pts([]float64{1, 2}, []float64{10, 900}), -1, false},
	}
	for _, tc := range cases {
		got, shape := CurvatureKnee(tc.points, 0)
		if ok := shape == CurveKnee; got != tc.want || ok != tc.ok {
			t.Errorf("%s: CurvatureKnee = %d,%v; want %d,%v", tc.name, got, shape, tc.want, tc.ok)
		}
	}
}

func TestSaturationLevel(t *testing.T) {
	open := []Point{
		{Load: 1, Throughput: 1, ExpectedThroughput: 1},
		{Load: 2, Throughput: 1.97, ExpectedThroughput: 2},
		{Load: 4, Throughput: 3.7, ExpectedThroughput: 4},
		{Load: 8, Throughput: 4.1, ExpectedThroughput: 8},
	}
	if got, ok := SaturationLevel(open); got != 2 || !ok {
		t.Errorf("open loop: saturation at %d, want 2 (3.7 < 95%% of 4)", got)
	}
	closed := []Point{{Load: 1, Throughput: 10}, {Load: 2, Throughput: 19}, {Load: 4, Throughput: 30}, {Load: 8, Throughput: 31}}
	if got, ok := SaturationLevel(closed); got != 3 || !ok {
		t.Errorf("closed loop: saturation at %d, want 3 (31 for twice the streams of 30)", got)
	}
	// Finely spaced levels of a server still scaling: 10 → 11 streams buy
	// 3% (noise keeps it under 5%), but 10 → 12 buy 18%.
	fine := []Point{{Load: 10, Throughput: 100}, {Load: 11, Throughput: 103}, {Load: 12, Throughput: 118}, {Load: 13, Throughput: 126}}
	if got, ok := SaturationLevel(fine); ok {
		t.Errorf("finely spaced closed loop still scaling: saturation at %d", got)
	}
	// And the same spacing past the server's limit does saturate, judged
	// against the level 20% lighter.
	flat := []Point{{Load: 10, Throughput: 100}, {Load: 11, Throughput: 101}, {Load: 12, Throughput: 102}, {Load: 13, Throughput: 101}}
	if got, ok := SaturationLevel(flat); got != 2 || !ok {
		t.Errorf("finely spaced closed loop at its limit: saturation at %d, want 2", got)
	}
	if _, ok := SaturationLevel(open[:2]); ok {
		t.Error("a server keeping up reported saturation")
	}
}

// TestFindKneesSaturationInputs: open-loop levels compare the completion
// rate (completions over the span they cover) with the offered rate, so a
// short window's idle edges do not read as saturation; voice levels compare
// the share of offered calls served to the end.
func TestFindKneesSaturationInputs(t *testing.T) {
	run := func(offered, completion, perWindow float64) *Run {
		r := &Run{Health: Health{Verdict: VerdictHealthy}}
		r.Stats.TTFTSched = Summary{Count: 10, P95: 100}
		r.Arrivals.OfferedRate, r.Arrivals.CompletionRate, r.Throughput.RequestsPerS = offered, completion, perWindow
		return r
	}
	s := &Sweep{Axis: "rate", SLO: SLO{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}}
	// Per window the first level looks behind (1.2 of 1.4), per span it keeps up.
	s.Levels = []Level{{Load: 2, Run: run(1.4, 1.5, 1.2)}, {Load: 4, Run: run(4.1, 4.0, 3.6)}, {Load: 8, Run: run(7.9, 5.0, 4.9)}}
	s.FindKnees()
	if s.Knees.Saturation == nil || s.Knees.Saturation.Load != 8 {
		t.Errorf("saturation %+v, want at 8", s.Knees.Saturation)
	}
	v := &Sweep{Axis: "rate", Workload: "voice", SLO: s.SLO}
	for i, done := range []int64{50, 49, 30} {
		r := run(float64(i+1), 0, 0)
		r.Calls = &Calls{Started: 50, Completed: done}
		v.Levels = append(v.Levels, Level{Load: float64(i + 1), Run: r})
	}
	v.FindKnees()
	if v.Knees.Saturation == nil || v.Knees.Saturation.Load != 3 {
		t.Errorf("voice saturation %+v, want at 3 (30 of 50 calls served)", v.Knees.Saturation)
	}
}

// TestCurvatureKneeAgainstSLO: a rise that doubles a small base but stays
// under 10% of the SLO is no knee; the same curve against a tight SLO is.
func TestCurvatureKneeAgainstSLO(t *testing.T) {
	curve := pts([]float64{1, 2, 3, 4, 5}, []float64{10, 11, 12, 14, 25})
	if _, shape := CurvatureKnee(curve, 300); shape != CurveFlat {
		t.Errorf("a 15 ms rise against a 300 ms SLO: shape %q, want flat", shape)
	}
	if i, shape := CurvatureKnee(curve, 50); shape != CurveKnee || i != 3 {
		t.Errorf("against a 50 ms SLO: %d %q, want the knee at index 3", i, shape)
	}
	// TTFT p95 from 30 to 75 ms against 300 ms: a bend no one would see.
	low := pts([]float64{2, 4, 8, 12, 16, 24}, []float64{30, 31, 33, 36, 52, 75})
	if _, shape := CurvatureKnee(low, 300); shape != CurveFlat {
		t.Errorf("a 45 ms rise against a 300 ms SLO: shape %q, want flat", shape)
	}
}

// TestVoiceSaturationInTurns: calls are judged in turns per second against
// the turns a server keeping up would answer (offered calls/s × measured
// turns per call), so a level that answers 2.2 of the 3 turns/s offered
// is saturated even though every call it started was eventually served.
func TestVoiceSaturationInTurns(t *testing.T) {
	v := &Sweep{Axis: "rate", Workload: "voice", SLO: SLO{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}}
	for _, lv := range []struct{ calls, turns, offered float64 }{{0.5, 1.49, 1.5}, {1, 2.2, 3}} {
		r := &Run{Health: Health{Verdict: VerdictHealthy}}
		r.Stats.TTFTSched = Summary{Count: 10, P95: 100}
		r.Arrivals.OfferedRate, r.Arrivals.CompletionRate = lv.calls, lv.turns
		r.Calls = &Calls{Started: 30, Completed: 30, TurnsOfferedPerS: lv.offered}
		v.Levels = append(v.Levels, Level{Load: lv.calls, Run: r})
	}
	v.FindKnees()
	if v.Knees.Saturation == nil || v.Knees.Saturation.Load != 1 {
		t.Errorf("voice saturation %+v, want at 1 call/s (2.2 of 3 turns/s)", v.Knees.Saturation)
	}
}

// TestSaturationNeedsMoreThanNoise: nine arrivals in a window, eight
// matched (89%), is one request finishing past the window's edge; forty
// matched of fifty is saturation.
func TestSaturationNeedsMoreThanNoise(t *testing.T) {
	few := []Point{{Load: 1, Throughput: 0.8 * 8 / 9, ExpectedThroughput: 0.8, Arrivals: 9}}
	if _, ok := SaturationLevel(few); ok {
		t.Error("one request short of nine read as saturation")
	}
	many := []Point{{Load: 4, Throughput: 4 * 40.0 / 50, ExpectedThroughput: 4, Arrivals: 50}}
	if _, ok := SaturationLevel(many); !ok {
		t.Error("ten requests short of fifty not read as saturation")
	}
}

// TestGoodputSLOKnee: with --slo-metric goodput the SLO knee is the
// largest load where at least the asked share of requests was good.
func TestGoodputSLOKnee(t *testing.T) {
	s := &Sweep{Axis: "rate", SLO: SLO{MinGoodPercent: 90, MaxErrorRate: 0.02}}
	for i, share := range []float64{0.99, 0.95, 0.91, 0.7, 0.2} {
		r := &Run{Health: Health{Verdict: VerdictHealthy}, Goodput: &Goodput{Share: share, Finished: 100}, Requests: Requests{Sent: 100, OK: 100},
			Throughput: Throughput{RequestsPerS: float64(i + 1)}}
		s.Levels = append(s.Levels, Level{Load: float64(i + 1), Run: r})
	}
	s.FindKnees()
	if k := s.Knees.SLO; k == nil || k.Load != 3 || *k.LatencyMs > 9.0001 {
		t.Errorf("goodput knee %+v, want load 3 (91%% good, 9%% not)", k)
	}
}

// TestMissingRequestsAndUnreachedSLO: a level whose cut requests are more
// than MaxMissingShare of it cannot meet the SLO (its slowest are gone), is
// left out of the curve with its reason, and still counts toward
// saturation; an SLO every judged level met is marked not reached.
func TestMissingRequestsAndUnreachedSLO(t *testing.T) {
	run := func(p95 float64, ok, cut int64, completion float64, offered float64) *Run {
		r := &Run{Health: Health{Verdict: VerdictHealthy}}
		r.Stats.TTFTSched = Summary{Count: ok, P95: p95}
		r.Requests = Requests{Sent: ok + cut, OK: ok, Interrupted: cut}
		r.Arrivals.OfferedRate, r.Arrivals.CompletionRate, r.Throughput.RequestsPerS = offered, completion, completion
		return r
	}
	slo := SLO{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}
	s := &Sweep{Axis: "rate", SLO: slo, Levels: []Level{
		{Load: 2, Run: run(100, 100, 0, 2, 2)},
		{Load: 4, Run: run(150, 200, 1, 4, 4)},     // 0.5% cut: believed
		{Load: 8, Run: run(120, 180, 220, 3.6, 8)}, // 55% cut: its p95 reads low
		{Load: 16, Run: run(110, 150, 650, 3, 16)},
	}}
	s.FindKnees()
	if s.Knees.SLO == nil || s.Knees.SLO.Load != 4 || s.Knees.SLONotReached {
		t.Errorf("SLO knee %+v (not reached %v), want 4, crossed at the cut level", s.Knees.SLO, s.Knees.SLONotReached)
	}
	if len(s.Knees.Excluded) != 2 || !s.Knees.Excluded[0].Saturation || !strings.Contains(s.Knees.Excluded[0].Reason, "55.0% of its requests are missing") {
		t.Errorf("excluded %+v, want levels 8 and 16 for their missing requests", s.Knees.Excluded)
	}
	if s.Knees.Saturation == nil || s.Knees.Saturation.Load != 8 {
		t.Errorf("saturation %+v, want 8 (the cut level fell behind)", s.Knees.Saturation)
	}
	up := &Sweep{Axis: "rate", SLO: slo, Levels: []Level{{Load: 1, Run: run(50, 100, 0, 1, 1)}, {Load: 2, Run: run(60, 100, 0, 2, 2)}}}
	up.FindKnees()
	if up.Knees.SLO == nil || up.Knees.SLO.Load != 2 || !up.Knees.SLONotReached {
		t.Errorf("SLO knee %+v (not reached %v), want 2 and not reached", up.Knees.SLO, up.Knees.SLONotReached)
	}
	csv, err := s.CSV()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(csv), ",400,180,0,220,0,0.55,") {
		t.Errorf("the CSV does not account for the cut level's requests:\n%s", csv)
	}
}

// TestSaturationByQueueGrowth: a queue growing through the window is
// saturation when it more than doubles, or grows by a third with a
// throughput shortfall the 5% noise margin alone would pass; growth under
// half a second, or without a shortfall when weak, is not.
func TestSaturationByQueueGrowth(t *testing.T) {
	level := func(load, through, first, last float64) Level {
		r := &Run{Health: Health{Verdict: VerdictHealthy}}
		r.Stats.TTFTSched = Summary{Count: 500, P95: 100}
		r.Requests = Requests{OK: 500}
		r.Arrivals = Arrivals{OfferedRate: load, CompletionRate: through, AgeFirstThirdMs: first, AgeLastThirdMs: last}
		return Level{Load: load, Run: r}
	}
	for _, tc := range []struct {
		name  string
		level Level
		sat   bool
	}{
		{"steady", level(8, 8, 1200, 1350), false},
		{"doubling queue, throughput kept", level(8, 8, 1200, 3000), true},
		{"a third more, 3.4% short", level(16, 15.45, 17600, 25500), true},
		{"a third more, on pace", level(16, 15.9, 17600, 25500), false},
		{"tripled but under half a second", level(16, 16, 100, 300), false},
	} {
		s := &Sweep{Axis: "rate", SLO: SLO{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}, Levels: []Level{tc.level}}
		s.FindKnees()
		if got := s.Knees.Saturation != nil; got != tc.sat {
			t.Errorf("%s: saturated %v, want %v", tc.name, got, tc.sat)
		}
	}
}

// TestHostStarvedLevels: a client-limited level whose server's timers were
// late too (a stalled clock in both) is host-starved; it is left out of
// the knees by default, judged and named with --health-policy warn, and
// judged silently with ignore.
func TestHostStarvedLevels(t *testing.T) {
	level := func(load, p95 float64, stalled bool) Level {
		r := &Run{Health: Health{Verdict: VerdictHealthy}}
		r.Stats.TTFTSched = Summary{Count: 200, P95: p95}
		r.Requests = Requests{OK: 200}
		r.Arrivals = Arrivals{OfferedRate: load, CompletionRate: load}
		if stalled {
			r.Health = Health{Verdict: VerdictClientLimited, Reasons: []string{"timer lateness p99 80.0 ms exceeds 20 ms"}}
			r.Server = &Server{Lag: &Summary{Count: 100, P99: 85}}
			r.JudgeHost()
		}
		return Level{Load: load, Run: r}
	}
	build := func(policy string) *Sweep {
		s := &Sweep{Axis: "rate", HealthPolicy: policy, SLO: SLO{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02},
			Levels: []Level{level(1, 50, false), level(2, 55, true), level(4, 60, true), level(8, 400, false)}}
		s.FindKnees()
		return s
	}
	if v := build("").Levels[1].Run.Health; v.Verdict != VerdictHostStarved || !strings.Contains(strings.Join(v.Reasons, " "), "server's own timers were late too") {
		t.Fatalf("a stall in client and server: %+v", v)
	}
	if s := build(""); len(s.Knees.Excluded) != 2 || !strings.HasPrefix(s.Knees.Excluded[0].Reason, "host starved") {
		t.Errorf("default policy: excluded %+v", s.Knees.Excluded)
	}
	warn := build(HealthWarn)
	if len(warn.Knees.Excluded) != 0 || len(warn.Knees.JudgedUnhealthy) != 2 || warn.Knees.SLO == nil || warn.Knees.SLO.Load != 4 {
		t.Errorf("warn: excluded %+v, judged %+v, SLO knee %+v", warn.Knees.Excluded, warn.Knees.JudgedUnhealthy, warn.Knees.SLO)
	}
	if ign := build(HealthIgnore); len(ign.Knees.Excluded) != 0 || len(ign.Knees.JudgedUnhealthy) != 0 || ign.Knees.SLO.Load != 4 {
		t.Errorf("ignore: excluded %+v, judged %+v", ign.Knees.Excluded, ign.Knees.JudgedUnhealthy)
	}
	// A late client beside a punctual server is the client's own limit.
	r := &Run{Health: Health{Verdict: VerdictClientLimited}, Server: &Server{Lag: &Summary{P99: 2}}}
	if r.JudgeHost(); r.Health.Verdict != VerdictClientLimited {
		t.Errorf("a punctual server's client became %s", r.Health.Verdict)
	}
}
