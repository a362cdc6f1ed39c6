package results

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// shardRun is shard i of n with the given TTFTs (µs) and one output token
// count per request.
func shardRun(i, n int, ttfts []int64, seed uint64) *Run {
	h, out := hdrhistogram.New(1, 3_600_000_000, 3), hdrhistogram.New(1, 100_000_000, 3)
	for _, v := range ttfts {
		_ = h.RecordValue(v)
		_ = out.RecordValue(10)
	}
	enc := EncodeHistogram(h)
	hist := Histograms{"output_tokens": EncodeHistogram(out)}
	for _, name := range []string{"ttft_us", "ttft_sched_us", "itl_us", "tpot_us", "e2e_us", "e2e_sched_us", "queue_wait_us"} {
		hist[name] = enc
	}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	k := int64(len(ttfts))
	return &Run{SchemaVersion: SchemaVersion, Config: Config{Seed: seed, Rate: 10, Mode: "open"}, Shard: &Shard{Index: i, Count: n},
		StartedAt: start, WindowStartedAt: start.Add(time.Duration(i) * time.Millisecond), WindowSeconds: 10,
		Requests: Requests{Sent: k, OK: k, Errors: map[string]int64{}}, Tokens: Tokens{OutputTotal: 10 * k, UsageReported: true},
		Health: Health{Verdict: []string{VerdictHealthy, VerdictNoisy}[i%2], Reasons: []string{"timer lag"}}, Histograms: hist}
}

// TestMergeRunsPoolsPercentiles: the merged percentiles are those of one
// histogram of every shard's values; counts add up; the window is the
// union; health is the worst shard's, named.
func TestMergeRunsPoolsPercentiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pooled := hdrhistogram.New(1, 3_600_000_000, 3)
	var runs []*Run
	for i := range 3 {
		var v []int64
		for range 200 + 100*i {
			x := int64(r.ExpFloat64() * float64(20_000*(i+1)))
			v = append(v, x)
			_ = pooled.RecordValue(x)
		}
		runs = append(runs, shardRun(i, 3, v, 7))
	}
	// Order does not matter.
	m, err := MergeRuns([]*Run{runs[2], runs[0], runs[1]})
	if err != nil {
		t.Fatal(err)
	}
	want := SummarizeHistogram(pooled, 1000)
	if m.Stats.TTFT != want {
		t.Errorf("merged TTFT %+v, pooled %+v", m.Stats.TTFT, want)
	}
	if m.Requests.Sent != 900 || m.Tokens.OutputTotal != 9000 || m.Tokens.Output.Count != 900 {
		t.Errorf("counts: %d sent, %d output tokens (%d counted)", m.Requests.Sent, m.Tokens.OutputTotal, m.Tokens.Output.Count)
	}
	if m.WindowSeconds < 10.0019 || m.WindowSeconds > 10.0021 {
		t.Errorf("window %.4f s, want the union 10.002 s", m.WindowSeconds)
	}
	if m.Health.Verdict != VerdictNoisy || len(m.Health.Reasons) != 1 || !strings.HasPrefix(m.Health.Reasons[0], "shard 1: ") {
		t.Errorf("health %+v, want shard 1's noisy verdict, named", m.Health)
	}
	if got := m.Throughput.RequestsPerS; got < 89.9 || got > 90 {
		t.Errorf("throughput %.2f/s, want 900 over the union window", got)
	}
}

func TestMergeRunsRefuses(t *testing.T) {
	a, b := shardRun(0, 2, []int64{100}, 7), shardRun(1, 2, []int64{200}, 7)
	plain := shardRun(0, 2, []int64{100}, 7)
	plain.Shard = nil
	noHist := shardRun(1, 2, []int64{100}, 7)
	delete(noHist.Histograms, "itl_us")
	for _, c := range []struct {
		name string
		runs []*Run
		want string
	}{
		{"missing shard", []*Run{a}, "only 1 are given"},
		{"twice", []*Run{a, a}, "twice"},
		{"not a shard", []*Run{plain, b}, "no shard identity"},
		{"other split", []*Run{a, shardRun(1, 3, []int64{1}, 7)}, "parts"},
		{"no histogram", []*Run{a, noHist}, "itl_us"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := MergeRuns(c.runs); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// TestMergeRefusesWhatCannotBeRight: shards of other configurations,
// indices outside the split, forged counts and times are refused with the
// file and field named, never merged and never a panic.
func TestMergeRefusesWhatCannotBeRight(t *testing.T) {
	a := func() *Run { return shardRun(0, 2, []int64{100}, 7) }
	b := func() *Run { return shardRun(1, 2, []int64{200}, 7) }
	with := func(r *Run, f func(*Run)) *Run { f(r); return r }
	for _, c := range []struct {
		name string
		runs []*Run
		want string
	}{
		{"other seed", []*Run{a(), shardRun(1, 2, []int64{200}, 8)}, "seed differ"},
		{"other model", []*Run{a(), with(b(), func(r *Run) { r.Config.Model = "other" })}, "model differ"},
		{"index past the count", []*Run{a(), with(b(), func(r *Run) { r.Shard.Index = 4 })}, "shard 4 of 2"},
		{"negative index", []*Run{a(), with(b(), func(r *Run) { r.Shard.Index = -1 })}, "shard -1 of 2"},
		{"huge count", []*Run{with(a(), func(r *Run) { r.Shard.Count = 1 << 62 }), b()}, "parts"},
		{"huge count alone", []*Run{with(a(), func(r *Run) { r.Shard.Count = 1 << 62 })}, "only 1 are given"},
		{"forged shard count", []*Run{with(a(), func(r *Run) { r.Shard.Count = 1000000000 }), with(b(), func(r *Run) { r.Shard.Count = 1000000000 })}, "only 2 are given"},
		{"negative requests", []*Run{a(), with(b(), func(r *Run) { r.Requests.OK = -5 })}, "requests.ok is -5"},
		{"overflowing tokens", []*Run{a(), with(b(), func(r *Run) { r.Tokens.InputTotal = 1 << 62 })}, "tokens.input_total"},
		{"year one", []*Run{a(), with(b(), func(r *Run) { r.WindowStartedAt = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC) })}, "window_started_at"},
		{"NaN window", []*Run{a(), with(b(), func(r *Run) { r.WindowSeconds = math.NaN() })}, "window_s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := MergeRuns(c.runs); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
	// A sweep merge refuses the same, at once, instead of every level
	// becoming an error.
	sw := func(r *Run) *Sweep {
		return &Sweep{SchemaVersion: SchemaVersion, Axis: "rate", Levels: []Level{{Load: 1, Run: r}}}
	}
	if _, err := MergeSweeps([]*Sweep{sw(a())}); err == nil || !strings.Contains(err.Error(), "only 1 are given") {
		t.Errorf("a sweep merge missing a shard: %v", err)
	}
	if _, err := MergeSweeps([]*Sweep{sw(a()), sw(a())}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a sweep merge with a shard twice: %v", err)
	}
}

// BenchmarkMerge64 merges 64 shard results of 2,000 requests each (ten
// histograms apiece, latencies spread over four decades).
func BenchmarkMerge64(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	runs := make([]*Run, 64)
	for i := range runs {
		v := make([]int64, 2000)
		for j := range v {
			v[j] = int64(100 + r.ExpFloat64()*50_000)
		}
		runs[i] = shardRun(i, 64, v, 7)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := MergeRuns(runs); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzMerge: no pair of shard files, however damaged or forged, makes the
// merge (or the pooling of repeats' files) panic.
func FuzzMerge(f *testing.F) {
	a, _ := json.Marshal(shardRun(0, 2, []int64{100, 300}, 7))
	b, _ := json.Marshal(shardRun(1, 2, []int64{200}, 7))
	f.Add(a, b)
	f.Add(a, a)
	f.Add([]byte(`{"schema_version":1,"shard":{"index":7,"count":2}}`), b)
	// Shards with slices, for the slices' merge.
	sa, _ := json.Marshal(slicedShard(0, 2, [2][]int64{{10, 20}, {30}}, VerdictHealthy))
	sb, _ := json.Marshal(slicedShard(1, 2, [2][]int64{{40}, {50, 60}}, VerdictNoisy))
	f.Add(sa, sb)
	f.Fuzz(func(t *testing.T, x, y []byte) {
		rx, err := DecodeRun("x", x)
		if err != nil {
			return
		}
		ry, err := DecodeRun("y", y)
		if err != nil {
			return
		}
		MergeRuns([]*Run{rx, ry})
		PoolRunFiles([]*Run{rx, ry})
		MergeSweeps([]*Sweep{{Axis: "rate", Levels: []Level{{Load: 1, Run: rx}}}, {Axis: "rate", Levels: []Level{{Load: 1, Run: ry}}}})
	})
}

// TestMergeNamesALateShard: a shard that came 900 ms after --start-at is
// named with its delay and the share of its arrivals that went out late.
func TestMergeNamesALateShard(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a, b := shardRun(0, 2, []int64{100, 200}, 7), shardRun(1, 2, []int64{300, 400}, 7)
	for i, r := range []*Run{a, b} {
		r.Shard.StartAt = &at
		r.Arrivals.WindowArrivals = 100
		if i == 1 {
			r.Shard.StartLatenessMs, r.Arrivals.LateSends = 900, 9
		}
	}
	m, err := MergeRuns([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	want := "shard 1 started 900 ms after --start-at: 9 of its 100 arrivals (9.0%) went out late"
	if !strings.Contains(strings.Join(m.Warnings, "\n"), want) {
		t.Errorf("warnings %q, want %q", m.Warnings, want)
	}
}

// TestMergeServerViewAgainstMergedTotals: shard 0 read the server, which
// saw both shards' 4 requests while shard 0 sent 2. Merged, the view sets
// the server against the merged client figures and totals: no "other
// traffic", the client column the merged percentiles, delivery redone.
// Without a server view in shard 0 the merge says there is none.
func TestMergeServerViewAgainstMergedTotals(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a, b := shardRun(0, 2, []int64{100_000, 200_000}, 7), shardRun(1, 2, []int64{300_000, 400_000}, 7)
	for _, r := range []*Run{a, b} {
		r.Shard.StartAt = &at
	}
	server, own := 240.0, 150.0
	a.Server = &Server{Source: "knee-sim", Requests: 4,
		Figures: []Figure{{Name: "TTFT p50", Client: &own, Server: &server}, {Name: "queue mean", Server: &server}}}
	a.Server.CheckTraffic(a, 4, true)
	if len(a.Server.Traffic) == 0 {
		t.Fatal("a shard's own view should say the server saw every shard's requests")
	}
	m, err := MergeRuns([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Server
	if s == nil {
		t.Fatal("no merged server view")
	}
	for _, w := range s.AllWarnings() {
		if strings.Contains(w, "other traffic") || strings.Contains(w, "shards' requests") || strings.Contains(w, "no delivery") {
			t.Errorf("merged view warns %q, which the merged totals contradict", w)
		}
	}
	f := s.Figures[0]
	if f.Client == nil || *f.Client != m.Stats.TTFT.P50 || f.Delivery == nil || *f.Delivery != m.Stats.TTFT.P50-server {
		t.Errorf("TTFT p50 row %+v, want the merged client p50 %.1f and its delivery", f, m.Stats.TTFT.P50)
	}
	if q := s.Figures[1]; q.Client != nil || q.Delivery != nil {
		t.Errorf("queue row %+v: the client has no counterpart", q)
	}
	a.Server = nil
	m, err = MergeRuns([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.Server != nil || !strings.Contains(strings.Join(m.Notes, "\n"), "no server view") {
		t.Errorf("server %+v notes %q: want none, said", m.Server, m.Notes)
	}
}

// TestMergeKeepsTurnsAndServerTimings: the per-turn table and llama.cpp's
// per-response timings are rebuilt from the shards' histograms, so their
// percentiles are those of the pooled values, as the main ones are.
func TestMergeKeepsTurnsAndServerTimings(t *testing.T) {
	pooled := hdrhistogram.New(1, 3_600_000_000, 3)
	var runs []*Run
	for i := range 2 {
		r := shardRun(i, 2, []int64{100}, 7)
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		for v := range 50 {
			x := int64(1000 * (v + 1 + 100*i))
			_ = h.RecordValue(x)
			_ = pooled.RecordValue(x)
		}
		r.ByTurn = []TurnStats{{Turn: 2, TTFT: SummarizeHistogram(h, 1000), ITL: SummarizeHistogram(h, 1000)}}
		r.Histograms[TurnHistogram(2, "ttft")] = EncodeHistogram(h)
		r.Histograms[TurnHistogram(2, "itl")] = EncodeHistogram(h)
		r.ServerTimings = &ServerTimings{Requests: 50, PromptMs: SummarizeHistogram(h, 1000), TPOT: SummarizeHistogram(h, 1000)}
		r.Histograms[ServerPromptHistogram] = EncodeHistogram(h)
		r.Histograms[ServerTPOTHistogram] = EncodeHistogram(h)
		runs = append(runs, r)
	}
	own := 1.0
	runs[0].Server = &Server{Source: "llamacpp", RequestsFrom: "timings", Requests: 50, Figures: []Figure{{Name: "prefill p50", Server: &own}}}
	m, err := MergeRuns(runs)
	if err != nil {
		t.Fatal(err)
	}
	want := SummarizeHistogram(pooled, 1000)
	// llama.cpp's rows from its timings are every shard's, not shard 0's.
	if s := m.Server; s == nil || s.Requests != 100 || s.Figures[0].Server == nil || *s.Figures[0].Server != want.P50 {
		t.Errorf("merged llama.cpp view %+v, want 100 requests and prefill p50 %.1f from every shard's timings", s, want.P50)
	}
	if len(m.ByTurn) != 1 || m.ByTurn[0].Turn != 2 || m.ByTurn[0].TTFT != want || m.ByTurn[0].ITL != want {
		t.Errorf("per-turn table %+v, want turn 2 with the pooled %+v", m.ByTurn, want)
	}
	if st := m.ServerTimings; st == nil || st.Requests != 100 || st.PromptMs != want || st.TPOT != want {
		t.Errorf("server timings %+v, want 100 requests and the pooled percentiles", st)
	}
	// A shard of an older knee, without the histograms: left out, said.
	delete(runs[1].Histograms, TurnHistogram(2, "ttft"))
	delete(runs[1].Histograms, ServerPromptHistogram)
	m, err = MergeRuns(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ByTurn) != 0 || m.ServerTimings != nil || !strings.Contains(strings.Join(m.Notes, "\n"), "left out of the merge") {
		t.Errorf("by turn %+v, timings %+v, notes %q: want both left out and said", m.ByTurn, m.ServerTimings, m.Notes)
	}
}

// TestTrafficCountsLateWarmups: a warm-up request cut by the client's
// timeout ends at the server inside the window; one more request than
// were measured is that, not other traffic. Two more is other traffic.
func TestTrafficCountsLateWarmups(t *testing.T) {
	r := &Run{Requests: Requests{Sent: 13, OK: 0, Warmup: 1}}
	for _, tc := range []struct {
		server int64
		want   string
	}{{14, "warm-up requests sent before it"}, {15, "other traffic"}, {13, ""}} {
		s := &Server{}
		mixed := s.CheckTraffic(r, tc.server, true)
		got := strings.Join(s.Traffic, "; ")
		if (tc.want == "") != !mixed || !strings.Contains(got, tc.want) {
			t.Errorf("server %d: %q (mixed %v), want %q", tc.server, got, mixed, tc.want)
		}
	}
}

// TestImplausibleLatenciesRefused: a latency no run measures, negative or
// past any clamp (an edited file), is refused by its field when the file
// is read, before a calibration scores a negative figure as no error or
// overflows its error to infinity (1e308).
func TestImplausibleLatenciesRefused(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Run)
		want string
	}{
		{func(r *Run) { r.Stats.TTFT.P50 = -5 }, "stats.ttft.p50 is -5 ms"},
		{func(r *Run) { r.Stats.E2ESched.Mean = 1e308 }, "stats.e2e_sched.mean is 1e+308 ms"},
		{func(r *Run) { r.Stats.ITL.Count = -1 }, "stats.itl.count is -1"},
		{func(r *Run) { r.Throughput.OutputTokensPerS = 1e308 }, "throughput.output_tokens_per_s is 1e+308"},
	} {
		r := &Run{SchemaVersion: SchemaVersion}
		tc.edit(r)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeRun("r.json", b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
	if got := PercentError(0, 1e308); got != -100 {
		t.Errorf("PercentError(0, 1e308) = %v, want -100", got)
	}
}
