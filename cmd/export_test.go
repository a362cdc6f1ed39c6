package cmd

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSweepExportsWhileItRuns: knee sweep --export prometheus=ADDR
// serves the level in progress and, during the second level, the first
// level's figures; OTLP, not built, is refused before anything runs.
func TestSweepExportsWhileItRuns(t *testing.T) {
	slow(t)
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
			"--step-duration", "3s", "--input-tokens", "32", "--max-tokens", "8", "--no-server-metrics", "--out-dir", t.TempDir(), "--label", "exp")
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
	if code, _, errOut := execute(t, "run", "--export", "otlp=http://127.0.0.1:4318", "--rate", "1"); code != ExitUsage || !strings.Contains(errOut, "not built yet") {
		t.Errorf("otlp: exit %d, %s", code, errOut)
	}
}
