package cmd

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestPoolURLs(t *testing.T) {
	for _, c := range []struct {
		in    string
		pools bool
		err   string
	}{
		{"http://h:8000/metrics", false, ""},
		{"http://h:8000/metrics?a=b", false, ""},
		{"prefill=http://p/metrics,decode=http://d/metrics", true, ""},
		{"decode=http://d/metrics", true, ""},
		{"router=http://r/metrics", true, "no pool"},
		{"prefill=http://p/metrics,prefill=http://q/metrics", true, "twice"},
		{"prefill=file:///etc/passwd", true, "not an http(s) URL"},
		{"prefill=", true, "not an http(s) URL"},
	} {
		got, pools, err := poolURLs(c.in)
		if pools != c.pools || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: pools %v %v, %v; want pools %v, error %q", c.in, got, pools, err, c.pools, c.err)
		}
	}
}

// TestPoolsMeasuredByPhase: a run against a disaggregated knee sim that
// reads its pools' own pages (vLLM's names, as a P/D deployment's
// engines publish them) reports each pool's account and the time to
// first token by phase, its means equal to the simulator's exact own;
// a pool's page that answers nothing is refused before any request.
func TestPoolsMeasuredByPhase(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		dir := t.TempDir()
		url, _ := simOfModels(t, dir, "pd", "models:\n  - name: pd\n    preset: h100-80gb/llama-3.1-8b\n"+
			"    disaggregated: {prefill_replicas: 1, decode_replicas: 1, kv_link_gbps: 10}\n")
		root := strings.TrimSuffix(url, "/v1")
		r, stdout := runOutput(t, "run", "--base-url", url, "--model", "pd", "--rate", "2", "--duration", "30s",
			"--input-tokens", "2000", "--max-tokens", "32",
			"--server-metrics-url", "prefill="+root+"/metrics/prefill,decode="+root+"/metrics/decode")
		ph := r.Phases
		if ph == nil || ph.Source != "vllm" || r.Pools["prefill"] == nil || r.Pools["decode"] == nil {
			t.Fatalf("phases %+v, pools %v\n%s", ph, r.Pools, stdout)
		}
		if r.Pools["decode"].OutputTokens < r.Tokens.OutputTotal || r.Pools["prefill"].Requests < r.Requests.OK {
			t.Errorf("the decode pool generated %d tokens, the client read %d", r.Pools["decode"].OutputTokens, r.Tokens.OutputTotal)
		}
		// 2,000 tokens of 128 KiB at 10 Gb/s: 210 ms alone on the link,
		// longer when prompts overlap on it (42% busy at 2/s).
		want := r.Tokens.Input.P50 * 128 * 1024 * 8 / 10e9 * 1000
		if ph.Transfer.Mean < 0.95*want || ph.Transfer.Mean > 3*want || ph.FirstStep.Mean <= 0 || math.IsNaN(ph.FirstStep.Mean) {
			t.Errorf("KV transfer mean %.1f ms (alone %.1f), first decode step %.2f ms", ph.Transfer.Mean, want, ph.FirstStep.Mean)
		}
		if !strings.Contains(stdout, "phases   TTFT by phase") || !strings.Contains(stdout, "pool     decode") {
			t.Errorf("the terminal says no phases or pools:\n%s", stdout)
		}
		// One page of both pools' series, a role label on each (a
		// router's or a scraper's; knee sim's /metrics): read as pools.
		r1 := runJSON(t, "run", "--base-url", url, "--model", "pd", "--rate", "2", "--duration", "10s",
			"--input-tokens", "2000", "--max-tokens", "32", "--server-metrics-url", root+"/metrics")
		if r1.Phases == nil || r1.Pools["prefill"] == nil || r1.Pools["decode"] == nil || r1.Pools["decode"].OutputTokens < r1.Tokens.OutputTotal {
			t.Errorf("one page of role-labelled series: phases %+v, pools %v", r1.Phases, r1.Pools)
		}
		code, _, errOut := execute(t, "run", "--base-url", url, "--model", "pd", "--rate", "2", "--duration", "5s", "-o", filepath.Join(dir, "none.json"),
			"--server-metrics-url", "prefill="+root+"/v1/models,decode="+root+"/metrics/decode")
		if code != ExitRuntime || !strings.Contains(errOut, "prefill pool") {
			t.Errorf("a pool's page that is no metrics: exit %d, %s", code, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "none.json")); err == nil {
			t.Error("a run refused before its first request wrote a result")
		}
	})
}

// sglangPool is an in-test SGLang P/D engine's /metrics: its figures grow
// by one window's worth at every scrape, so any two scrapes differ by
// whole windows of the same means.
type sglangPool struct {
	mu    sync.Mutex
	n     int
	write func(w io.Writer, k int)
}

func (p *sglangPool) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	p.n++
	k := p.n
	p.mu.Unlock()
	p.write(w, k)
}

// sglangHist writes a histogram of k*10 observations of v (in its own
// unit), all in the bucket above v.
func sglangHist(w io.Writer, name, labels string, k int, v float64) {
	sep := ""
	if labels != "" {
		sep = ","
	}
	fmt.Fprintf(w, "# TYPE %s histogram\n", name)
	for _, le := range []float64{v / 2, v * 2} {
		c := 0
		if le > v {
			c = k * 10
		}
		fmt.Fprintf(w, "%s_bucket{%s%sle=\"%g\"} %d\n", name, labels, sep, le, c)
	}
	fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n%s_sum{%s} %g\n%s_count{%s} %d\n", name, labels, sep, k*10, name, labels, float64(k*10)*v, name, labels, k*10)
}

// TestSGLangPoolsByPhase: SGLang's P/D engines publish their queue times,
// the prefill_forward stage and the KV transfers in ms: the phases are
// read from those, the other stages left out, the first decode step left
// unknown (SGLang times none).
func TestSGLangPoolsByPhase(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		url := startSim(t, "", "")
		gauges := func(w io.Writer, k int) {
			fmt.Fprintf(w, "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 2\n# TYPE sglang:num_requests_total counter\nsglang:num_requests_total %d\n", k*10)
		}
		prefill := serveHTTP(t, &sglangPool{write: func(w io.Writer, k int) {
			gauges(w, k)
			sglangHist(w, "sglang:queue_time_seconds", "", k, 0.05)
			fmt.Fprintf(w, "# TYPE sglang:per_stage_req_latency_seconds histogram\n")
			for _, st := range []struct {
				stage string
				v     float64
			}{{"prefill_forward", 0.2}, {"decode_forward", 5}} {
				var b strings.Builder
				sglangHist(&b, "sglang:per_stage_req_latency_seconds", `stage="`+st.stage+`"`, k, st.v)
				fmt.Fprint(w, strings.SplitN(b.String(), "\n", 2)[1])
			}
			sglangHist(w, "sglang:kv_transfer_latency_ms", "", k, 30)
		}})
		decode := serveHTTP(t, &sglangPool{write: func(w io.Writer, k int) {
			gauges(w, k)
			sglangHist(w, "sglang:queue_time_seconds", "", k, 0.007)
		}})
		r := runJSON(t, "run", "--base-url", url, "--rate", "2", "--duration", "5s",
			"--server-metrics-url", "prefill="+prefill+"/metrics,decode="+decode+"/metrics")
		ph := r.Phases
		if ph == nil || ph.Source != "sglang" {
			t.Fatalf("phases %+v", ph)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"prefill queue", ph.PrefillQueue.Mean, 50}, {"prefill", ph.Prefill.Mean, 200}, {"KV transfer", ph.Transfer.Mean, 30},
			{"decode queue", ph.DecodeQueue.Mean, 7}} {
			if math.Abs(c.got-c.want) > 1e-6*c.want {
				t.Errorf("%s mean %.6g ms, want %g", c.name, c.got, c.want)
			}
		}
		if ph.FirstStep.Count != 0 || r.Pools["prefill"] == nil || r.Pools["prefill"].Source != "sglang" {
			t.Errorf("first decode step %+v (SGLang times none), pools %v", ph.FirstStep, r.Pools)
		}
	})
}
