package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
)

// TestGoodputHandCount: five records against ttft ≤ 100 ms, tpot ≤ 20 ms:
//
//	a: TTFT 50, 11 tokens over 150 ms (TPOT 15)  → good
//	b: TTFT 120                                   → TTFT too slow
//	c: TTFT 80, 11 tokens over 300 ms (TPOT 30)  → TPOT too slow
//	d: TTFT 90, 1 token (no TPOT)                → good
//	e: failed                                     → never good
//
// So 2 good of 5 finished.
func TestGoodputHandCount(t *testing.T) {
	g, err := ParseGoodput("ttft:100, tpot:20")
	if err != nil {
		t.Fatal(err)
	}
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	rec := func(ttft, span, tokens int) *record.Record {
		return &record.Record{Sent: 0, FirstToken: ms(ttft), LastToken: ms(ttft + span), Done: ms(ttft + span), Chunks: tokens}
	}
	records := []*record.Record{rec(50, 150, 11), rec(120, 100, 11), rec(80, 300, 11), rec(90, 0, 1), {Class: "http_500", Done: ms(5)}}
	c := newCollector(4)
	c.goodput = g
	for i, r := range records {
		r.Index = i
		c.add(r)
	}
	_, agg, _ := c.merged()
	got := goodputResult(g, agg.good, agg.ok+agg.failed, 10)
	if got.Good != 2 || got.Finished != 5 || got.Share != 0.4 || got.RequestsPerS != 0.2 {
		t.Errorf("goodput %+v, want 2 of 5 (0.4), 0.2 good req/s over 10 s", got)
	}
	for _, bad := range []string{"ttft", "ttft:-1", "vibes:3", "tpot:x"} {
		if _, err := ParseGoodput(bad); err == nil {
			t.Errorf("ParseGoodput(%q) accepted", bad)
		}
	}
	if g, _ := ParseGoodput("e2el:4000"); g[results.FieldE2E] != 4*time.Second {
		t.Errorf("vLLM's e2el is e2e: %v", g)
	}
}

// TestGoodputBoundsTheFirstAnswer: ttfat bounds the first answer token;
// a request that reasoned and never answered is never good.
func TestGoodputBoundsTheFirstAnswer(t *testing.T) {
	g, err := ParseGoodput("ttfat:500")
	if err != nil || g[results.FieldTTFAT] != 500*time.Millisecond {
		t.Fatalf("%+v, %v", g, err)
	}
	ms := time.Millisecond
	quick := &record.Record{Sent: 0, FirstToken: 50 * ms, FirstAnswer: 400 * ms, LastToken: 900 * ms, Chunks: 20}
	slow := &record.Record{Sent: 0, FirstToken: 50 * ms, FirstAnswer: 700 * ms, LastToken: 900 * ms, Chunks: 20}
	none := &record.Record{Sent: 0, FirstToken: 50 * ms, LastToken: 900 * ms, Chunks: 20, ReasoningChunks: 20}
	if !g.good(quick) || g.good(slow) || g.good(none) {
		t.Errorf("good: answered at 400 ms %v, at 700 ms %v, never %v; want true, false, false", g.good(quick), g.good(slow), g.good(none))
	}
}

// TestGoodputPercentileSaysWhy: a bound written with a percentile, in
// either spelling, is refused with the per-request form and the SLO that
// takes the percentile.
func TestGoodputPercentileSaysWhy(t *testing.T) {
	for _, in := range []string{"ttft_sched.p95:300", "ttft_sched_p95:300"} {
		_, err := ParseGoodput(in)
		if err == nil || !strings.Contains(err.Error(), "write ttft_sched:300") || !strings.Contains(err.Error(), "--slo ttft_sched.p95:300") {
			t.Errorf("ParseGoodput(%q): %v", in, err)
		}
	}
}
