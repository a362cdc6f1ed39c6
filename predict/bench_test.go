package predict

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/workload"
)

// BenchmarkPredictLevel predicts one level of an 8B model on an H100 at 20
// requests/s for 10 simulated minutes (about 12,000 requests of 512 in,
// 128 out) and reports simulated requests per wall-second.
func BenchmarkPredictLevel(b *testing.B) {
	target := presetTarget(b, "h100-80gb/llama-3.1-8b")
	lv := requestsLevel(workload.Synthetic{Tokens: 512, MaxTokens: 128, Seed: 1},
		driver.Load{Rate: 20, Burstiness: 1, Duration: 10 * time.Minute, Seed: 1, Warmup: 0})
	var sent int64
	b.ResetTimer()
	for b.Loop() {
		res, err := (&Virtual{Target: target}).Run(context.Background(), lv)
		if err != nil {
			b.Fatal(err)
		}
		sent += res.Requests.Sent
	}
	b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "sim-req/s")
}

// BenchmarkPredictSweep predicts a 10-level open-loop sweep (2 to 20
// requests/s, 10 simulated minutes each) of the same model, with the
// levels on one core and on all of them, in simulated requests per
// wall-second.
func BenchmarkPredictSweep(b *testing.B) {
	target := presetTarget(b, "h100-80gb/llama-3.1-8b")
	for _, par := range []int{1, runtime.GOMAXPROCS(0)} {
		name := "cores=1"
		if par > 1 {
			name = "cores=all"
		}
		b.Run(name, func(b *testing.B) {
			var sent int64
			for b.Loop() {
				sw := bench.Sweep(context.Background(), &Virtual{Target: target}, bench.SweepOptions{
					Loads: []float64{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}, Parallel: par, Sweep: &results.Sweep{Axis: "rate"},
					Level: func(_ int, rate float64) (*bench.Level, error) {
						return requestsLevel(workload.Synthetic{Tokens: 512, MaxTokens: 128, Seed: 1},
							driver.Load{Rate: rate, Burstiness: 1, Duration: 10 * time.Minute, Seed: 1}), nil
					}})
				for _, l := range sw.Levels {
					if l.Run == nil {
						b.Fatal(l.Error)
					}
					sent += l.Run.Requests.Sent
				}
			}
			b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "sim-req/s")
		})
	}
}

// BenchmarkCalibrate times the recovery of TestCalibrateRecoversKnownTuning:
// five closed-loop levels of 120 requests (1,024 ± 350 in, 96 ± 20 out),
// three fitted and two held out, from the shipped preset's tuning.
func BenchmarkCalibrate(b *testing.B) {
	target := presetTarget(b, "h100-80gb/llama-3.1-8b")
	measured := measuredSweep(b, target, truth, []float64{1, 2, 8, 16, 48}, 120)
	evals := 0
	for b.Loop() {
		cal, _, err := Calibrate(context.Background(), CalibrateOptions{Measured: measured, Name: "truth", Target: target})
		if err != nil {
			b.Fatal(err)
		}
		evals += cal.Evaluations
	}
	b.ReportMetric(float64(evals)/float64(b.N), "replays/op")
}

// BenchmarkPredictFleet16 predicts 16 replicas of the 8B H100 preset
// behind a round-robin router at 320 requests/s (20 per replica, as in
// BenchmarkPredictLevel) for 2 simulated minutes, in simulated requests
// per wall-second.
func BenchmarkPredictFleet16(b *testing.B) {
	target := presetTarget(b, "h100-80gb/llama-3.1-8b")
	var sent int64
	for b.Loop() {
		res, err := (&Virtual{Target: target, Replicas: 16, Routing: RoundRobin}).Run(context.Background(),
			requestsLevel(workload.Synthetic{Tokens: 512, MaxTokens: 128, Seed: 1}, driver.Load{Rate: 320, Burstiness: 1, Duration: 2 * time.Minute, Seed: 1}))
		if err != nil {
			b.Fatal(err)
		}
		sent += res.Requests.Sent
	}
	b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "sim-req/s")
}

// BenchmarkPredictorAgainstCore sets the predictor's simulated requests
// per wall-second beside the bare scheduler core's, on the same requests
// (an H100 8B at 20/s for ten simulated minutes of 1,000-token prompts and
// 200-token answers): the core alone (sched.RunVirtual, no client, no
// records, no summary) fed the requests' token ids as knee sim and the
// core's own benchmark feed it (core-ids), or their blocks' hashes already
// chained, as a memo keeps them (core); the predictor with what is said
// kept in a memo (as a calibration's and a plan's repeated levels run);
// and the predictor saying every request afresh (one knee predict level).
func BenchmarkPredictorAgainstCore(b *testing.B) {
	target := presetTarget(b, "h100-80gb/llama-3.1-8b")
	memo := &Memo{}
	load := driver.Load{Rate: 20, Burstiness: 1, Duration: 10 * time.Minute, Seed: 1, Warmup: 0}
	src := workload.Synthetic{Tokens: 1000, MaxTokens: 200, Seed: 1}
	lv := requestsLevel(src, load)
	memoised := &Virtual{Target: target, Memo: memo, NoHistograms: true}
	res, err := memoised.Run(context.Background(), lv)
	if err != nil {
		b.Fatal(err)
	}
	n := int(res.Requests.Sent)
	offs, err := workload.Schedule(load.Rate, load.Burstiness, load.Seed, n)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]sched.Request, n)
	for i := range reqs {
		sd, ok := memo.get(i)
		if !ok {
			b.Fatalf("request %d not in the memo", i)
		}
		reqs[i] = sd.sr
		reqs[i].ID, reqs[i].Arrival = int64(i), (offs[i] - offs[0]).Seconds()
	}
	cfg, _, err := target.Config()
	if err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B, sent int) {
		b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "sim-req/s")
	}
	// The same requests as token ids, as the core's own benchmark
	// (sched.BenchmarkVirtual) and knee sim feed it: the core hashes their
	// blocks itself.
	withIDs := make([]sched.Request, n)
	for i := range withIDs {
		req := src.Request(i)
		plan, err := target.Responder.Generate(target.genRequest(&req), anyContext)
		if err != nil {
			b.Fatal(err)
		}
		withIDs[i] = engine.Request(plan, 0)
		withIDs[i].ID, withIDs[i].Arrival = reqs[i].ID, reqs[i].Arrival
	}
	for _, fed := range []struct {
		name string
		reqs []sched.Request
	}{{"core-ids", withIDs}, {"core", reqs}} {
		b.Run(fed.name, func(b *testing.B) {
			sent := 0
			for b.Loop() {
				sched.RunVirtual(cfg, fed.reqs, nil)
				sent += n
			}
			report(b, sent)
		})
	}
	b.Run("predictor", func(b *testing.B) {
		sent := 0
		for b.Loop() {
			r, _ := memoised.Run(context.Background(), lv)
			sent += int(r.Requests.Sent)
		}
		report(b, sent)
	})
	b.Run("predictor-unmemoised", func(b *testing.B) {
		fresh := &Virtual{Target: target}
		sent := 0
		for b.Loop() {
			r, _ := fresh.Run(context.Background(), lv)
			sent += int(r.Requests.Sent)
		}
		report(b, sent)
	})
}
