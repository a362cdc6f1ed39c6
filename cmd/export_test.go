package cmd

import (
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/report/otlpexport/otlptest"
	"github.com/kneebench/knee/results"
)

// TestSweepExportsWhileItRuns: knee sweep --export prometheus=ADDR
// serves the level in progress and, during the second level, the first
// level's figures.
func TestSweepExportsWhileItRuns(t *testing.T) {
	slow(t)
	quiet.Wire(t, func() { testSweepExportsWhileItRuns(t) })
}

func testSweepExportsWhileItRuns(t *testing.T) {
	url := startSim(t, "", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	done := make(chan int)
	go func() {
		code, _, _ := execute(t, "sweep", "--export", "prometheus="+addr, "--base-url", url, "--model", "knee-sim", "--rates", "4,8",
			"--step-duration", "1500ms", "--input-tokens", "32", "--max-tokens", "8", "--no-server-metrics", "--out-dir", t.TempDir(), "--label", "exp")
		done <- code
	}()
	var inProgress, finished bool
	deadline := time.Now().Add(60 * time.Second)
	for !(inProgress && finished) && time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("the sweep ended (exit %d) before its figures were seen: in progress %v, finished level %v", code, inProgress, finished)
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text := string(b)
		inProgress = inProgress || strings.Contains(text, `knee_level_requests_sent{label="exp"}`)
		finished = finished || strings.Contains(text, `knee_latency_seconds{label="exp",load="4",metric="ttft_sched",quantile="0.95"}`)
	}
	if code := <-done; code != 0 && code != ExitFailed {
		t.Errorf("exit %d", code)
	}
	if !inProgress || !finished {
		t.Errorf("seen: the level in progress %v, the first level's figures %v", inProgress, finished)
	}
}

// TestRunExportsOTLP: knee run --export otlp=URL pushes every measured
// request into the GenAI conventions' histograms, read back by
// OpenTelemetry's own protobuf types: their counts and sums are the
// result's, exactly, and the finished run's percentiles are its own. A
// receiver that refuses costs a warning, not the run; a URL that is no
// receiver's is a usage error before anything is sent.
func TestRunExportsOTLP(t *testing.T) {
	slow(t)
	quiet.Wire(t, func() { testRunExportsOTLP(t) })
}

func testRunExportsOTLP(t *testing.T) {
	url := startSim(t, "", "")
	col := otlptest.Start(t)
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, errOut := execute(t, "run", "--export", "otlp="+col.URL, "--base-url", url, "--rate", "10", "--duration", "2s",
		"--input-tokens", "32", "--max-tokens", "8", "--no-server-metrics", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	if err := col.Err(); err != nil {
		t.Fatal(err)
	}
	var res results.Run
	if err := readJSON(out, &res); err != nil {
		t.Fatal(err)
	}
	total := func(name string, want map[string]string) (uint64, float64) {
		var n uint64
		var s float64
	next:
		for _, p := range col.Points(name) {
			for k, v := range want {
				if p.Attrs[k] != v {
					continue next
				}
			}
			n, s = n+p.Count, s+p.Sum+p.Value
		}
		return n, s
	}
	target := map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": res.Config.Model, "server.address": "127.0.0.1", "knee.label": "run"}
	if n, _ := total("gen_ai.client.operation.duration", target); n != uint64(res.Requests.OK+res.Requests.Failed) || n == 0 {
		t.Errorf("%d durations pushed for %d requests ended", n, res.Requests.OK+res.Requests.Failed)
	}
	if n, _ := total("gen_ai.client.operation.time_to_first_chunk", target); n != uint64(res.Stats.TTFT.Count) {
		t.Errorf("%d first chunks pushed, the result's TTFT counts %d", n, res.Stats.TTFT.Count)
	}
	if n, _ := total("gen_ai.client.operation.time_per_output_chunk", target); n != uint64(res.Stats.ITL.Count) {
		t.Errorf("%d chunk gaps pushed, the result's ITL counts %d", n, res.Stats.ITL.Count)
	}
	if _, s := total("gen_ai.client.token.usage", map[string]string{"gen_ai.token.type": "output"}); s != float64(res.Tokens.OutputTotal) {
		t.Errorf("%v output tokens pushed, the result counts %d", s, res.Tokens.OutputTotal)
	}
	if _, s := total("knee.latency", map[string]string{"knee.metric": "ttft_sched", "knee.quantile": "0.95"}); math.Abs(s-res.Stats.TTFTSched.P95/1000) > 1e-12 {
		t.Errorf("TTFT p95 from the schedule pushed as %v s, the result's %v ms", s, res.Stats.TTFTSched.P95)
	}
	dead := otlptest.Start(t)
	dead.Close()
	code, _, errOut = execute(t, "run", "--export", "otlp="+dead.URL, "--base-url", url, "--rate", "10", "--requests", "3",
		"--input-tokens", "32", "--max-tokens", "8", "--no-server-metrics")
	if code != 0 || !strings.Contains(errOut, "pushes to the collector failed") {
		t.Errorf("a receiver that is down: exit %d, %s", code, errOut)
	}
	code, _, errOut = execute(t, "run", "--export", "otlp=ftp://127.0.0.1:4318", "--base-url", url, "--rate", "1")
	if code != ExitUsage || !strings.Contains(errOut, "http or https") {
		t.Errorf("otlp=ftp://: exit %d, %s", code, errOut)
	}
}
