package report

import "github.com/kneebench/knee/results"

// slicesJS is a level's time slices as the charts take them: each
// series as [seconds into the window at the slice's end, value] pairs,
// a slice with no value left out. Latencies are TTFT and E2E from the
// schedule over the requests due in the slice ("ttft_sched.p50" …); the
// server's gauges are as read about its end ("waiting", "running",
// "kv_cache_usage" in %).
type slicesJS struct {
	Width  float64                 `json:"width"`
	Series map[string][][2]float64 `json:"series"`
	// Latency is the series the charts draw over time: ttft_sched, or a
	// pooling endpoint's e2e_sched (its answer is one body).
	Latency string `json:"latency"`
}

// minChartSlices is the fewest slices a page draws over time: two or
// three points draw a "trend" that is only noise.
const minChartSlices = 4

// sliceData is r's slices for the page, nil with fewer than
// minChartSlices.
func sliceData(r *results.Run) *slicesJS {
	if r == nil || len(r.Slices) < minChartSlices {
		return nil
	}
	js := &slicesJS{Width: r.SliceS, Series: map[string][][2]float64{}, Latency: r.Config.Latency()}
	add := func(name string, x float64, v *float64) {
		if v != nil {
			js.Series[name] = append(js.Series[name], [2]float64{x, *v})
		}
	}
	for _, s := range r.Slices {
		x := s.EndS
		for _, d := range []struct {
			name string
			dist results.SliceDist
		}{{"ttft_sched", s.TTFTSched}, {"e2e_sched", s.E2ESched}} {
			if d.dist.Count > 0 {
				add(d.name+".p50", x, &d.dist.P50)
				add(d.name+".p95", x, &d.dist.P95)
				add(d.name+".p99", x, &d.dist.P99)
			}
		}
		completed := float64(s.Completed)
		add("completed", x, &completed)
		if g := s.Server; g != nil {
			add("waiting", x, g.Waiting)
			add("running", x, g.Running)
			if g.KVCacheUsage != nil {
				pct := 100 * *g.KVCacheUsage
				add("kv_cache_usage", x, &pct)
			}
		}
	}
	return js
}
