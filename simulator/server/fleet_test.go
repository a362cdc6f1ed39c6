package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
)

// gauge reads one sample of a Prometheus text exposition.
func gauge(t *testing.T, body, name, model string) float64 {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, name+"{") && strings.Contains(line, `model_name="`+model+`"`) {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no %s for %s in\n%s", name, model, body)
	return 0
}

// TestFleetReplicasAreIndependent serves three replicas on consecutive
// free ports: each has its own /metrics and says in its summary which
// replica it is, and a request streaming on replica 0 fills only replica
// 0's KV cache.
func TestFleetReplicasAreIndependent(t *testing.T) {
	quiet.Wire(t, func() { testFleetReplicasAreIndependent(t) })
}

func testFleetReplicasAreIndependent(t *testing.T) {
	mf, err := ParseModels("test-models", []byte(testModels))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := builtinFile("responses")
	r, err := ParseResponses("test-responses", b)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 3)
	done := make(chan error, 1)
	go func() {
		done <- RunFleet(ctx, "127.0.0.1", 0, 3, Options{Models: mf, Responder: r}, 2*time.Second, func(_ int, a net.Addr) { addrs <- a })
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("fleet: %v", err)
		}
	}()
	var urls []string
	for range 3 {
		select {
		case a := <-addrs:
			urls = append(urls, "http://"+a.String())
		case <-time.After(5 * time.Second):
			t.Fatal("the fleet did not come up")
		}
	}
	if urls[0] == urls[1] || urls[1] == urls[2] || urls[0] == urls[2] {
		t.Fatalf("replicas share an address: %v", urls)
	}
	for i, u := range urls {
		_, body := get(t, u+"/metrics/summary")
		var s Summary
		if err := json.Unmarshal(body, &s); err != nil || s.Replica == nil || s.Replica.Index != i || s.Replica.Count != 3 {
			t.Errorf("replica %d's summary says %+v (%v)", i, s.Replica, err)
		}
	}
	// A long answer keeps its blocks in replica 0's cache while it streams.
	reqCtx, stop := context.WithCancel(context.Background())
	defer stop()
	body := fmt.Sprintf(`{"model":"sched","prompt":%q,"max_tokens":3000,"ignore_eos":true,"stream":true}`, strings.Repeat("token ", 3000))
	req, _ := http.NewRequestWithContext(reqCtx, http.MethodPost, urls[0]+"/v1/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	go func() {
		if resp, err := client(t).Do(req); err == nil {
			defer resp.Body.Close()
			buf := make([]byte, 4096)
			for {
				if _, err := resp.Body.Read(buf); err != nil {
					return
				}
			}
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, m := get(t, urls[0]+"/metrics")
		if gauge(t, string(m), "vllm:kv_cache_usage_perc", "sched") > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica 0's KV cache never filled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i, u := range urls[1:] {
		_, m := get(t, u+"/metrics")
		if v := gauge(t, string(m), "vllm:kv_cache_usage_perc", "sched"); v != 0 {
			t.Errorf("replica %d's KV usage is %g while only replica 0 serves", i+1, v)
		}
		if v := gauge(t, string(m), "vllm:num_requests_running", "sched"); v != 0 {
			t.Errorf("replica %d runs %g requests", i+1, v)
		}
	}
}

// TestFleetConsecutivePorts: replicas listen on --port, --port+1, ...
func TestFleetConsecutivePorts(t *testing.T) {
	quiet.Wire(t, func() { testFleetConsecutivePorts(t) })
}

func testFleetConsecutivePorts(t *testing.T) {
	mf, err := ParseModels("test-models", []byte(testModels))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := builtinFile("responses")
	r, _ := ParseResponses("test-responses", b)
	// A free port's neighbour may be another process's: then the fleet
	// refuses to start, and the test tries another pair.
	for try := 0; ; try++ {
		base, got, err := fleetPorts(mf, r)
		if err != nil && strings.Contains(err.Error(), "address already in use") && try < 5 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != base || got[1] != base+1 {
			t.Errorf("replicas on ports %v, want %d and %d", got, base, base+1)
		}
		return
	}
}

// fleetPorts starts a fleet of two on a free port and the next, and
// returns the port asked and those the replicas took, or why it did not
// start; it never waits on a fleet that ended.
func fleetPorts(mf *ModelsFile, r *Responder) (int, []int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	base := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ports := make(chan int, 2)
	done := make(chan error, 1)
	go func() {
		done <- RunFleet(ctx, "127.0.0.1", base, 2, Options{Models: mf, Responder: r}, time.Second, func(_ int, a net.Addr) { ports <- a.(*net.TCPAddr).Port })
	}()
	var got []int
	for len(got) < 2 {
		select {
		case p := <-ports:
			got = append(got, p)
		case err := <-done:
			if err == nil {
				err = errors.New("the fleet ended before both replicas listened")
			}
			return base, got, err
		}
	}
	cancel()
	return base, got, <-done
}
