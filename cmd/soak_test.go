package cmd

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
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
// mid-stream. Afterwards the KV cache is empty and the bench's counts add
// up; the bubble it runs in fails the test if a goroutine of the server
// or of either client is left behind. See CHANGELOG.md for the
// same soak on real sockets.
func TestSoak(t *testing.T) {
	t.Parallel()
	inBubble(t, testSoak)
}

func testSoak(t *testing.T) {
	mf, err := simulator.LoadModels(context.Background(), "testdata/soak.yml")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := simulator.LoadResponses(context.Background(), "builtin:bench-responses")
	srv, base := simServer(t, simulator.Options{Models: mf, Responder: r})

	// 200 raw clients, each streaming and hanging up at a random point.
	var hungUp, rawDone atomic.Int64
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		return netOf(t).Dial(addr, time.Second)
	}}
	client := &http.Client{Transport: tr}
	ctx, stop := context.WithCancel(context.Background())
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		cut := make([]time.Duration, 64)
		for k := range cut {
			cut[k] = time.Duration(50+rng.IntN(1500)) * time.Millisecond
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ctx.Err() == nil; k++ {
				rctx, cancel := context.WithTimeout(ctx, cut[k%len(cut)])
				body := fmt.Sprintf(`{"model":"soak","max_tokens":200,"ignore_eos":true,"stream":true,"messages":[{"role":"user","content":"raw %d %d"}]}`, i, k)
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
	code, out, errOut := execute(t, "run", "--base-url", base, "--model", "soak", "--concurrency", "1800", "--duration", "3s",
		"--warmup", "0", "--max-tokens", "20", "--input-tokens", "32", "--timeout", "30s", "--output", resPath)
	stop()
	wg.Wait()
	tr.CloseIdleConnections()
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("raw clients: %d hung up, %d finished", hungUp.Load(), rawDone.Load())
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
	// The KV cache drains to zero once the hung-up streams' writes fail.
	var s simulator.Summary
	for range 150 {
		s = srv.SummaryNow()
		if sc := s.Models["soak"].Scheduler; sc != nil && sc.KVUsage == 0 && sc.Running == 0 && sc.Waiting == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	sc := s.Models["soak"].Scheduler
	t.Errorf("not drained 15 s after the load: KV usage %.4f, running %d, waiting %d", sc.KVUsage, sc.Running, sc.Waiting)
}
