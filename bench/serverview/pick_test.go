package serverview

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/health/quiet"
	"google.golang.org/protobuf/proto"
)

// samplePicks are the families a vLLM view samples, and one that is a
// histogram, so the suffixed samples are picked too.
var samplePicks = map[string]bool{
	"vllm:num_requests_running": true, "vllm:num_requests_waiting": true,
	"vllm:kv_cache_usage_perc": true, "vllm:gpu_cache_usage_perc": true, loraInfo: true,
	"sglang:num_running_reqs": true, "sglang:num_queue_reqs": true, "sglang:token_usage": true,
	"llamacpp:requests_processing": true, "llamacpp:requests_deferred": true,
	"vllm:time_to_first_token_seconds": true,
}

// samePicked: the picked page parses to the same families as the whole
// page, for every picked family, and to no other.
func samePicked(t *testing.T, page []byte, names map[string]bool) {
	t.Helper()
	whole, err := parseExposition(page)
	if err != nil {
		return
	}
	picked, err := parseExposition(pickFamilies(page, names))
	if err != nil {
		t.Fatalf("the whole page parses, the picked one does not: %v\n%q", err, pickFamilies(page, names))
	}
	escapes := bytes.IndexByte(page, '\\') >= 0 // a quoted name with escapes is kept
	for name, f := range picked {
		if !escapes && !names[name] && !names[string(trimSuffixes([]byte(name)))] {
			t.Errorf("%s picked, not asked for", name)
		}
		if !proto.Equal(f, whole[name]) {
			t.Errorf("%s: picked %v, whole %v", name, f, whole[name])
		}
	}
	for name := range names {
		if (whole[name] == nil) != (picked[name] == nil) {
			t.Errorf("%s: in the whole page %v, in the picked %v", name, whole[name] != nil, picked[name] != nil)
		}
	}
}

func TestPickFamiliesKeepsWhatItPicks(t *testing.T) {
	t.Parallel()
	pages, _ := filepath.Glob("testdata/*.txt")
	if len(pages) < 4 {
		t.Fatalf("testdata holds %d pages", len(pages))
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(p), func(t *testing.T) { samePicked(t, b, samplePicks) })
	}
	for name, page := range map[string]string{
		"no newline at the end": "vllm:num_requests_running 3",
		"space before labels":   "vllm:num_requests_running {model_name=\"m\"} 3\nother 1\n",
		"suffixed histogram":    "# TYPE vllm:time_to_first_token_seconds histogram\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 2\nvllm:time_to_first_token_seconds_sum 1\nvllm:time_to_first_token_seconds_count 2\n",
		"CRLF lines":            "# TYPE vllm:num_requests_waiting gauge\r\nvllm:num_requests_waiting 1\r\n",
	} {
		t.Run(name, func(t *testing.T) { samePicked(t, []byte(page), samplePicks) })
	}
}

// A page without the sampled gauges is an answer (nothing to sample), not
// a failed scrape.
func TestPickFamiliesOfAPageWithoutThem(t *testing.T) {
	t.Parallel()
	s, err := parseExposition(pickFamilies([]byte("# TYPE other counter\nother 1\n"), samplePicks))
	if err != nil || len(s) != 0 {
		t.Fatalf("got %v, %v; want no families and no error", s, err)
	}
}

// FuzzPickFamilies: whatever page parses whole parses picked, to the same
// families.
func FuzzPickFamilies(f *testing.F) {
	for _, p := range []string{"testdata/vllm_after.txt", "testdata/sglang_after.txt"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{a=\"b\"} 1\n")
	f.Add("{\"vllm:num_requests_running\"} 1\n")
	f.Add("# TYPE \"vllm:num_requests_waiting\" gauge\n{\"vllm:num_requests_waiting\",a=\"b\"} 1\n{\"0\"}0\n")
	f.Fuzz(func(t *testing.T, page string) { samePicked(t, []byte(page), samplePicks) })
}

// BenchmarkSampleParse is a second's sample of knee sim's busy page:
// every family parsed, against the sampled ones picked first.
func BenchmarkSampleParse(b *testing.B) {
	page, err := os.ReadFile("testdata/kneesim_busy.txt")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseExposition(page); err != nil {
				b.Fatal(err)
			}
		}
	})
	sampled := (&View{kind: "knee-sim"}).sampledFamilies()
	b.Run("picked", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseExposition(pickFamilies(page, sampled)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSampleKeepsTheServersWords: a sample that the server refuses says
// what the server said, not what was left of it once the sampled
// families were picked (nothing).
func TestSampleKeepsTheServersWords(t *testing.T) {
	quiet.Wire(t, func() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "upstream busy, try later", http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		v := &View{t: transport.Target{BaseURL: srv.URL + "/v1", Model: "m"}, kind: "vllm", metricsURL: srv.URL + "/metrics"}
		s, why := v.fetchFamilies(v.sampledFamilies())
		if s != nil || !strings.Contains(why, "HTTP 503") || !strings.Contains(why, "upstream busy, try later") {
			t.Errorf("scrape %v, why %q: want the 503 and the server's words", s, why)
		}
	})
}
