package results

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestParseBounds reads --slo and refuses what it cannot judge.
func TestParseBounds(t *testing.T) {
	b, good, err := ParseBounds("ttft_p95:500, tpot_p50:50,e2e_sched_p99:4000")
	if err != nil || len(b) != 3 || b[0] != (Bound{Metric: "ttft", Percentile: 95, Ms: 500}) || b[2].Metric != "e2e_sched" || good != 0 {
		t.Fatalf("%+v, %g, %v", b, good, err)
	}
	if b, good, err := ParseBounds("goodput:90,itl_p99:50"); err != nil || good != 90 || len(b) != 1 {
		t.Errorf("goodput:90,itl_p99:50: %+v, %g, %v", b, good, err)
	}
	for _, bad := range []string{"", "ttft:500", "ttft_p97:500", "latency_p95:500", "ttft_p95:0", "ttft_p95:NaN", "ttft_p95:-3",
		"ttft_p95:1e308", "goodput:0", "goodput:101", "goodput:x"} {
		if _, _, err := ParseBounds(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestSLOFileForms: an SLO is written with its bounds and with the
// curve's metric, percentile and threshold that sweep files always
// carried; files of either form read back to the same SLO.
func TestSLOFileForms(t *testing.T) {
	for _, tc := range []struct {
		file string
		want SLO
	}{
		{`{"metric":"ttft_sched","percentile":95,"threshold_ms":300,"max_error_rate":0.02}`,
			SLO{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}},
		{`{"metric":"goodput","percentile":95,"threshold_ms":0,"max_error_rate":0.02,"min_good_percent":90}`,
			SLO{MinGoodPercent: 90, MaxErrorRate: 0.02}},
		{`{"bounds":[{"metric":"ttft","percentile":95,"ms":500},{"metric":"itl","percentile":99,"ms":50}],"max_error_rate":0.05}`,
			SLO{Bounds: []Bound{{Metric: "ttft", Percentile: 95, Ms: 500}, {Metric: "itl", Percentile: 99, Ms: 50}}, MaxErrorRate: 0.05}},
	} {
		var got SLO
		if err := json.Unmarshal([]byte(tc.file), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s read as %+v, want %+v", tc.file, got, tc.want)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var again SLO
		if err := json.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%s: written as %s, read back as %+v (%v)", tc.file, b, again, err)
		}
		var legacy struct {
			Metric    string  `json:"metric"`
			Threshold float64 `json:"threshold_ms"`
		}
		if err := json.Unmarshal(b, &legacy); err != nil || legacy.Metric != got.Metric() || legacy.Threshold != got.ThresholdMs() {
			t.Errorf("%s: the curve's fields %+v, want %s at %g", b, legacy, got.Metric(), got.ThresholdMs())
		}
	}
}

// TestSLOFlagsSpellings: --slo in the plan's syntax, a bare number with
// the older --slo-metric and --slo-percentile (a sweep preset's is one),
// goodput shares in either spelling, and the mixes refused.
func TestSLOFlagsSpellings(t *testing.T) {
	given := func(names ...string) func(string) bool {
		return func(f string) bool { return slices.Contains(names, f) }
	}
	base := SLOFlags{Spec: "ttft_sched_p95:300", Metric: "ttft_sched", Percentile: 95, MaxErrorRate: 0.02}
	for _, tc := range []struct {
		name string
		f    func(SLOFlags) SLOFlags
		want string
	}{
		{"default", func(f SLOFlags) SLOFlags { return f }, "ttft_sched p95 ≤ 300 ms, errors under 2%"},
		{"plan syntax", func(f SLOFlags) SLOFlags {
			f.Spec, f.Given = "ttft_p99:500,itl_p95:40", given("slo")
			return f
		}, "ttft p99 ≤ 500 ms, itl p95 ≤ 40 ms, errors under 2%"},
		{"bare number", func(f SLOFlags) SLOFlags { f.Spec, f.Given = "250", given("slo"); return f }, "ttft_sched p95 ≤ 250 ms, errors under 2%"},
		{"a preset's bare number", func(f SLOFlags) SLOFlags { f.Spec = "800"; return f }, "ttft_sched p95 ≤ 800 ms, errors under 2%"},
		{"older metric alone", func(f SLOFlags) SLOFlags {
			f.Metric, f.Percentile, f.Given = "itl", 99, given("slo-metric", "slo-percentile")
			return f
		}, "itl p99 ≤ 300 ms, errors under 2%"},
		{"older goodput", func(f SLOFlags) SLOFlags {
			f.Metric, f.Goodput, f.Given = "goodput", "ttft:300", given("slo-metric")
			return f
		}, "goodput ≥ 90%, errors under 2%"},
		{"goodput share", func(f SLOFlags) SLOFlags {
			f.GoodShare, f.Goodput, f.Given = 80, "ttft:300", given("goodput-share")
			return f
		}, "ttft_sched p95 ≤ 300 ms, goodput ≥ 80%, errors under 2%"},
		{"both spellings", func(f SLOFlags) SLOFlags {
			f.Spec, f.Given = "ttft_p95:5", given("slo", "slo-metric")
			return f
		}, "leave out --slo-metric"},
		{"goodput without bounds", func(f SLOFlags) SLOFlags { f.Spec, f.Given = "goodput:90", given("slo"); return f }, "needs --goodput bounds"},
		{"error rate", func(f SLOFlags) SLOFlags { f.MaxErrorRate = 0; return f }, "error: --max-error-rate"},
	} {
		slo, err := tc.f(base).SLO()
		got := slo.String()
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
