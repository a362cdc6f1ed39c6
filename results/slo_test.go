package results

import (
	"encoding/json"
	"reflect"
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
