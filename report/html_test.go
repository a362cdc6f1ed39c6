package report

import (
	"time"

	"github.com/kneebench/knee/results"
)

func sampleServerRun() *results.Run {
	r := sampleRun()
	r.StartedAt = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r.Goodput = &results.Goodput{Bounds: map[string]float64{"ttft": 300}, Good: 190, Finished: 205, Share: 190.0 / 205, RequestsPerS: 18.5}
	v := func(x float64) *float64 { return &x }
	r.Server = &results.Server{Source: "vllm", BucketEstimates: true, Requests: 205, PromptTokens: 104960, OutputTokens: 26240,
		Figures: []results.Figure{
			{Name: "TTFT mean", Client: v(46.3), Server: v(44.0), Delivery: v(2.3)},
			{Name: "TTFT p50", Client: v(42.1), Server: v(60), ServerLow: v(40), ServerHigh: v(60), Estimate: true},
		},
		Warnings: []string{"the server counted 300 requests in the window, the client sent 205: other traffic"}}
	return r
}
