package promexport

import (
	"net/http"
	"testing"

	"github.com/kneebench/knee/results"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads the exporter as Prometheus would, with its own text
// parser.
func scrape(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(e.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value is the gauge of family name whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

// TestExportReadBack: what the exporter is given, a Prometheus text
// parser reads back exactly: the level in progress, a finished level's
// percentiles (in seconds), throughput, error ratio and verdict, and the
// sweep's knee; a level the SLO does not judge has no slo_met.
func TestExportReadBack(t *testing.T) {
	e, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Status("h100", 8, results.Progress{Sent: 120, OK: 100, Errors: 2, InFlight: 18, Health: results.VerdictHealthy,
		RecentCount: 40, RecentTTFTP50ms: 81, RecentTTFTP95ms: 240, RecentTokens: 900, RecentITLP50ms: 12, RecentITLP95ms: 30})
	run := &results.Run{}
	run.Stats.TTFTSched = results.Summary{Count: 480, P50: 90, P90: 200, P95: 812, P99: 1500}
	run.Throughput = results.Throughput{RequestsPerS: 7.9, OutputTokensPerS: 1011}
	run.Requests = results.Requests{OK: 475, Failed: 5}
	e.Level("h100", 8, run, &results.Verdict{Judged: true, Meets: false})
	e.Level("h100", 16, run, &results.Verdict{Judged: false})
	e.Sweep("h100", &results.Sweep{Knees: results.Knees{SLO: &results.Knee{Load: 4}}})

	fams := scrape(t, e)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"knee_level_load", map[string]string{"label": "h100"}, 8},
		{"knee_level_requests_sent", nil, 120},
		{"knee_level_requests_errors", nil, 2},
		{"knee_level_requests_in_flight", nil, 18},
		{"knee_client_healthy", nil, 1},
		{"knee_recent_ttft_seconds", map[string]string{"quantile": "0.95"}, 0.24},
		{"knee_recent_itl_seconds", map[string]string{"quantile": "0.5"}, 0.012},
		{"knee_latency_seconds", map[string]string{"load": "8", "metric": "ttft_sched", "quantile": "0.95"}, 0.812},
		{"knee_latency_seconds", map[string]string{"load": "8", "metric": "ttft_sched", "quantile": "0.99"}, 1.5},
		{"knee_throughput_requests_per_second", map[string]string{"load": "8"}, 7.9},
		{"knee_throughput_output_tokens_per_second", map[string]string{"load": "8"}, 1011},
		{"knee_error_ratio", map[string]string{"load": "8"}, 5.0 / 480},
		{"knee_slo_met", map[string]string{"load": "8"}, 0},
		{"knee_slo_knee_load", map[string]string{"label": "h100"}, 4},
	} {
		got, ok := value(fams, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := value(fams, "knee_slo_met", map[string]string{"load": "16"}); ok {
		t.Error("a level the SLO did not judge has slo_met")
	}
	if _, ok := value(fams, "knee_latency_seconds", map[string]string{"metric": "itl"}); ok {
		t.Error("a latency with no samples was published")
	}
}
