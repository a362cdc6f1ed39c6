package predict

import (
	"testing"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/server"
	"github.com/kneebench/knee/workload"
)

// BenchmarkPredictLevel predicts one level of an 8B model on an H100 at 20
// requests/s for 10 simulated minutes (about 12,000 requests of 512 in,
// 128 out) and reports simulated requests per wall-second.
func BenchmarkPredictLevel(b *testing.B) {
	spec, err := presets.ParseSpec("h100-80gb/llama-3.1-8b")
	if err != nil {
		b.Fatal(err)
	}
	f, err := server.PresetModels(spec)
	if err != nil {
		b.Fatal(err)
	}
	r, err := content.ParseResponses("bench", []byte("default:\n  synthetic: {tokens: 65536}\n"))
	if err != nil {
		b.Fatal(err)
	}
	o := Options{
		Target: Target{Models: f, Model: "llama-3.1-8b", Responder: r, Chat: true},
		Source: workload.Synthetic{Tokens: 512, MaxTokens: 128, Seed: 1},
		Load:   bench.Load{Rate: 20, Burstiness: 1, Duration: 10 * time.Minute, Seed: 1, Warmup: 0},
		Config: results.Config{},
	}
	var sent int64
	b.ResetTimer()
	for b.Loop() {
		res, err := Level(o)
		if err != nil {
			b.Fatal(err)
		}
		sent += res.Requests.Sent
	}
	b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "sim-req/s")
}
