package serverview

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
)

// secondSlices cuts n seconds into one-second slices.
func secondSlices(n int) []results.Slice {
	ss := make([]results.Slice, n)
	for i := range ss {
		ss[i].StartS, ss[i].EndS = float64(i), float64(i+1)
	}
	return ss
}

// TestPlaceSamples holds that each slice gets the last sample read about
// its end (up to half the sampling interval after it), and a slice no
// sample fell near gets none.
func TestPlaceSamples(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	at := func(s float64, waiting float64) gaugeSample {
		return gaugeSample{at: start.Add(time.Duration(s * float64(time.Second))), values: map[string]float64{"waiting": waiting, "running": 8}}
	}
	timeline := []gaugeSample{at(-0.5, 99), at(0.4, 1), at(0.9, 2), at(1.3, 3), at(3.0, 4), at(4.2, 5), at(4.6, 99)}
	ss := secondSlices(4)
	placeSamples(ss, start, timeline, time.Second)
	want := []struct {
		has     bool
		atS     float64
		waiting float64
	}{{true, 1.3, 3}, {false, 0, 0}, {true, 3.0, 4}, {true, 4.2, 5}}
	for i, w := range want {
		g := ss[i].Server
		switch {
		case (g != nil) != w.has:
			t.Errorf("slice %d: gauges %v, want present %v", i, g, w.has)
		case g == nil:
		case g.AtS != w.atS || *g.Waiting != w.waiting || *g.Running != 8 || g.KVCacheUsage != nil:
			t.Errorf("slice %d: at %.1f s waiting %v, want at %.1f s waiting %v (running 8, no KV gauge)", i, g.AtS, *g.Waiting, w.atS, w.waiting)
		}
	}
}

// TestQueueTrend holds when a growing queue is named: steady, noisy and
// small queues are not.
func TestQueueTrend(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		waiting []float64
		grows   bool
	}{
		{"a backlog building", []float64{0, 3, 7, 12, 16, 21, 25, 30}, true},
		{"a backlog that only drained after the window", []float64{0, 3, 7, 12, 16, 21, 25, 30, 20, 10, 0}, true},
		{"steady", []float64{4, 5, 4, 6, 5, 4, 5, 6, 5}, false},
		{"small", []float64{0, 0, 1, 1, 2, 2, 3, 3, 3}, false},
		{"a spike that drained", []float64{0, 2, 40, 50, 10, 2, 1, 0, 0}, false},
		{"too few slices", []float64{0, 10, 20}, false},
		{"a backlog only in the drain", []float64{0, 0, 0, 0, 0, 0, 0, 0, 10, 20, 30}, false},
	}
	for _, c := range cases {
		ss := secondSlices(len(c.waiting))
		for i, w := range c.waiting {
			ss[i].Server = &results.SliceGauges{AtS: float64(i) + 0.9, Waiting: &w}
		}
		for i := range min(8, len(ss)) {
			ss[i].Sent = 10 // the arrivals' 8 s; the rest is the drain
		}
		got := queueTrend(ss, "vllm:num_requests_waiting")
		if (got != "") != c.grows {
			t.Errorf("%s: trend %q, want named %v", c.name, got, c.grows)
		}
	}
}

// TestSlicesCarryServerGauges runs the view against a vLLM-like server
// whose queue grows by one at every scrape, and holds that the slices
// carry its gauges in order, each read inside its slice.
func TestSlicesCarryServerGauges(t *testing.T) {
	t.Parallel()
	quiet.Wire(t, func() { testSlicesCarryServerGauges(t) })
}

func testSlicesCarryServerGauges(t *testing.T) {
	v, scrapes := growingQueue(t)
	res := &results.Run{WindowStartedAt: time.Now()}
	v.Start(t.Context())
	waitForSamples(v, 12)
	v.End(t.Context())
	elapsed := time.Since(res.WindowStartedAt).Seconds()
	width := elapsed / 4
	for i := range 4 {
		res.Slices = append(res.Slices, results.Slice{StartS: float64(i) * width, EndS: float64(i+1) * width})
	}
	v.Fill(res)
	prev, filled := -1.0, 0
	for i, s := range res.Slices {
		g := s.Server
		if g == nil {
			continue
		}
		filled++
		if tol := min(v.sampleEvery.Seconds(), width) / 2; g.AtS <= s.StartS+tol || g.AtS > s.EndS+tol {
			t.Errorf("slice %d [%.3f, %.3f] s holds a reading at %.3f s", i, s.StartS, s.EndS, g.AtS)
		}
		if g.Waiting == nil || g.Running == nil || g.KVCacheUsage == nil || *g.Running != 4 || *g.KVCacheUsage != 0.5 {
			t.Errorf("slice %d: gauges %+v, want running 4, KV 0.5 and a queue", i, g)
			continue
		}
		if *g.Waiting <= prev {
			t.Errorf("slice %d: queue %v after %v: the readings are out of order", i, *g.Waiting, prev)
		}
		prev = *g.Waiting
	}
	if filled == 0 {
		t.Errorf("no slice carries the server's gauges (%d scrapes): %+v", scrapes.Load(), res.Slices)
	}
}

// growingQueue is a view of a vLLM-like server whose queue grows by one
// at every scrape (4 running, KV half full), sampled every 10 ms, and
// the count of its scrapes.
func growingQueue(t *testing.T) (*View, *atomic.Int64) {
	t.Helper()
	var scrapes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1)
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} %d\n"+
			"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 4\n"+
			"# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name=\"m\"} 0.5\n", n)
	}))
	t.Cleanup(srv.Close)
	v := New(transport.Target{BaseURL: srv.URL + "/v1", Model: "m"}, "")
	if v.Kind() != "vllm" {
		t.Fatalf("kind %q (%s), want vllm", v.Kind(), v.Note())
	}
	v.sampleEvery = 10 * time.Millisecond
	return v, &scrapes
}

// waitForSamples waits until the view holds n samples, or 10 s: a
// starved host ends the test rather than hanging it.
func waitForSamples(v *View, n int) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		v.mu.Lock()
		have := len(v.timeline)
		v.mu.Unlock()
		if have >= n {
			return
		}
	}
}

// TestLatestGaugesFollowTheServer: a live view reads the last sample, its
// instant from the level's start; none before the first sample, and none
// once the readings stop (three sampling intervals after the last), so a
// view never shows an ended window's queue as the server's state now.
func TestLatestGaugesFollowTheServer(t *testing.T) {
	t.Parallel()
	quiet.Wire(t, func() { testLatestGaugesFollowTheServer(t) })
}

func testLatestGaugesFollowTheServer(t *testing.T) {
	v, _ := growingQueue(t)
	start := time.Now().Add(-2 * time.Second)
	if g, ok := v.LatestGauges(start); ok {
		t.Fatalf("gauges %+v before the window started", g)
	}
	v.Start(t.Context())
	waitForSamples(v, 3)
	g, ok := v.LatestGauges(start)
	v.mu.Lock()
	last := v.timeline[len(v.timeline)-1]
	v.mu.Unlock()
	switch {
	case !ok:
		t.Fatal("no gauges while the window runs")
	case g.Waiting == nil || *g.Waiting < 3 || *g.Waiting > last.values["waiting"] || *g.Running != 4 || *g.KVCacheUsage != 0.5:
		t.Errorf("gauges %+v, want a queue of 3 to %v, 4 running, KV 0.5", g, last.values["waiting"])
	case g.AtS < 2 || g.AtS > time.Since(start).Seconds():
		t.Errorf("read at %.3f s into the level, which started 2 s before the window", g.AtS)
	}
	v.End(t.Context())
	time.Sleep(4 * v.sampleEvery)
	if g, ok := v.LatestGauges(start); ok {
		t.Errorf("gauges %+v shown after the readings stopped", g)
	}
}
