package cmd

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator"
)

// TestSoak drives 2,000 concurrent streams at the scheduler engine: 1,800
// from knee's own bench, and 200 raw clients that hang up at random
// mid-stream. Afterwards the KV cache is empty, the simulator's goroutines
// are back to their baseline, and the bench's counts add up. It takes
// about half a minute, so -short skips it; see docs/performance.md.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}

	mf, err := simulator.LoadModels(context.Background(), "testdata/soak.yml")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := simulator.LoadResponses(context.Background(), "builtin:bench-responses")
	srv, err := simulator.NewServer(simulator.Options{Models: mf, Responder: r})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(time.Second)
	base := "http://" + ln.Addr().String() + "/v1"
	time.Sleep(50 * time.Millisecond)
	baseline := runtime.NumGoroutine()
	start := time.Now()

	// 200 raw clients, each streaming and hanging up at a random point.
	var hungUp, rawDone atomic.Int64
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	client := &http.Client{Transport: tr}
	ctx, stop := context.WithCancel(context.Background())
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				rctx, cancel := context.WithTimeout(ctx, time.Duration(50+rand.IntN(1500))*time.Millisecond)
				body := fmt.Sprintf(`{"model":"soak","max_tokens":200,"ignore_eos":true,"stream":true,"messages":[{"role":"user","content":"raw %d %d"}]}`, i, rand.Int())
				req, _ := http.NewRequestWithContext(rctx, "POST", base+"/chat/completions", strings.NewReader(body))
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil && rctx.Err() != nil {
					hungUp.Add(1)
				} else {
					rawDone.Add(1)
				}
				cancel()
			}
		}()
	}
	resPath := t.TempDir() + "/soak.json"
	code, out, errOut := execute(t, "run", "--base-url", base, "--model", "soak", "--concurrency", "1800", "--duration", "8s",
		"--warmup", "0", "--max-tokens", "20", "--input-tokens", "32", "--timeout", "30s", "--output", resPath)
	stop()
	wg.Wait()
	tr.CloseIdleConnections()
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("bench:\n%s\nraw clients: %d hung up, %d finished", out, hungUp.Load(), rawDone.Load())
	if hungUp.Load() == 0 {
		t.Error("no raw client hung up mid-stream")
	}
	// The bench's counts add up: ok + every error class = sent.
	res, err := results.ReadRun(resPath)
	if err != nil {
		t.Fatal(err)
	}
	var classes int64
	for _, n := range res.Requests.Errors {
		classes += n
	}
	if rq := res.Requests; rq.OK+classes+rq.Interrupted != rq.Sent || rq.Failed != classes || rq.Sent == 0 {
		t.Errorf("counts do not add up: %+v", rq)
	}
	// The KV cache drains to zero and goroutines return to baseline.
	deadline := time.Now().Add(15 * time.Second)
	var s simulator.Summary
	for time.Now().Before(deadline) {
		s = srv.SummaryNow()
		n := runtime.NumGoroutine()
		if sc := s.Models["soak"].Scheduler; sc != nil && sc.KVUsage == 0 && sc.Running == 0 && sc.Waiting == 0 && n <= baseline+5 {
			t.Logf("drained: KV 0, goroutines %d (baseline %d), %.1f s in all", n, baseline, time.Since(start).Seconds())
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	sc := s.Models["soak"].Scheduler
	t.Errorf("not drained: KV usage %.4f, running %d, waiting %d, goroutines %d (baseline %d)",
		sc.KVUsage, sc.Running, sc.Waiting, runtime.NumGoroutine(), baseline)
}
