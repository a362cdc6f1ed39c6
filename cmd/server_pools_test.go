package cmd

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
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
		out := filepath.Join(dir, "r.json")
		code, stdout, errOut := execute(t, "run", "--base-url", url, "--model", "pd", "--rate", "2", "--duration", "30s",
			"--input-tokens", "2000", "--max-tokens", "32", "-o", out,
			"--server-metrics-url", "prefill="+root+"/metrics/prefill,decode="+root+"/metrics/decode")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
		}
		r := &results.Run{}
		if err := readJSON(out, r); err != nil {
			t.Fatal(err)
		}
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
		one := filepath.Join(dir, "one.json")
		if code, stdout, errOut := execute(t, "run", "--base-url", url, "--model", "pd", "--rate", "2", "--duration", "10s",
			"--input-tokens", "2000", "--max-tokens", "32", "-o", one, "--server-metrics-url", root+"/metrics"); code != 0 {
			t.Fatalf("one page: exit %d\n%s\n%s", code, stdout, errOut)
		}
		r1 := &results.Run{}
		if err := readJSON(one, r1); err != nil || r1.Phases == nil || r1.Pools["prefill"] == nil || r1.Pools["decode"] == nil ||
			r1.Pools["decode"].OutputTokens < r1.Tokens.OutputTotal {
			t.Errorf("one page of role-labelled series: phases %+v, pools %v, %v", r1.Phases, r1.Pools, err)
		}
		code, _, errOut = execute(t, "run", "--base-url", url, "--model", "pd", "--rate", "2", "--duration", "5s", "-o", filepath.Join(dir, "none.json"),
			"--server-metrics-url", "prefill="+root+"/v1/models,decode="+root+"/metrics/decode")
		if code != ExitRuntime || !strings.Contains(errOut, "prefill pool") {
			t.Errorf("a pool's page that is no metrics: exit %d, %s", code, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "none.json")); err == nil {
			t.Error("a run refused before its first request wrote a result")
		}
	})
}
