package results

import (
	"strings"
	"testing"
)

// TestOneSpellingOfAFigure: a latency at a percentile reads as
// ttft_sched.p95 whichever way it was written (the older ttft_sched_p95
// of --slo, any case), a scalar by its name; a misspelt metric names
// the nearest; a scalar takes no percentile and a latency needs one.
func TestOneSpellingOfAFigure(t *testing.T) {
	for in, want := range map[string]string{"ttft_sched.p95": "ttft_sched.p95", "ttft_sched_p95": "ttft_sched.p95", "TTFT.P50": "ttft.p50",
		"e2e_p99": "e2e.p99", "throughput": "throughput", " errors ": "errors"} {
		m, err := ParseMeasure(in)
		if err != nil || m.String() != want {
			t.Errorf("%q: %v, %v; want %s", in, m, err, want)
		}
	}
	for in, want := range map[string]string{"ttft_shed.p95": "did you mean ttft_sched?", "ttft.p97": "one of 50, 90, 95, 99", "ttft": "read at a percentile",
		"throughput.p95": "no percentiles", "vibes": "no metric"} {
		if _, err := ParseMeasure(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want an error saying %q", in, err, want)
		}
	}
	r := &Run{Stats: Stats{TTFTSched: Summary{Count: 3, P95: 42}}, Requests: Requests{OK: 3, Failed: 1}}
	for in, want := range map[string]float64{"ttft_sched.p95": 42, "errors": 25} {
		m, _ := ParseMeasure(in)
		if v, ok := m.Of(r); !ok || v != want {
			t.Errorf("%s of the run: %v %v, want %v", in, v, ok, want)
		}
	}
	if m, _ := ParseMeasure("ttft.p95"); func() bool { _, ok := m.Of(r); return ok }() {
		t.Error("a latency the run did not measure reads as a value")
	}
	if b, _, err := ParseBounds("ttft_sched.p95:300, e2e_p99:4000"); err != nil || len(b) != 2 || b[0].String() != "ttft_sched.p95:300" || b[1].String() != "e2e.p99:4000" {
		t.Errorf("bounds %v, %v", b, err)
	}
}

// TestNearestIsATypoAway: a name a typo or two from a candidate is
// matched to it; one that shares no more than a short word would is not
// (a one-letter key is not "gap"), nor one three edits away.
func TestNearestIsATypoAway(t *testing.T) {
	names := []string{"gap", "rate", "ttft", "ttft_sched", "seed"}
	for in, want := range map[string]string{"rat": "rate", "tft": "ttft", "ttft_shed": "ttft_sched", "a": "", "ab": "",
		"sed": "seed", "throughput": "", "": ""} {
		if got := Nearest(in, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGateNamesWhatIsWrong: a misspelt figure says its nearest and no
// list; a wrong percentile says so; an unknown one lists what a gate takes.
func TestGateNamesWhatIsWrong(t *testing.T) {
	for rule, want := range map[string]string{"tft.p95:+10%": `no metric "tft": did you mean ttft?`,
		"ttft.p97:+10%": "one of 50, 90, 95, 99", "zzz:+10%": "knee gates a latency at p50"} {
		_, err := ParseGateRules(rule)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want it to say %q", rule, err, want)
		}
		if err != nil && strings.Count(err.Error(), "queue_wait") > 1 {
			t.Errorf("%s: the figures listed twice: %v", rule, err)
		}
	}
}

// TestPlural: a count of one takes the noun alone, and "was".
func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 requests were"}, {1, "1 request was"}, {2, "2 requests were"}} {
		if got := Plural(tc.n, "request") + " " + WasWere(tc.n); got != tc.want {
			t.Errorf("Plural(%d) WasWere = %q, want %q", tc.n, got, tc.want)
		}
	}
}
