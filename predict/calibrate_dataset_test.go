package predict

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// shareGPTShaped writes a ShareGPT file whose prompt and answer lengths
// are heavy-tailed (log-normal, 5 to 1,500 words), as real ones are and
// a normal approximation is not.
func shareGPTShaped(t testing.TB, n int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields("the of and to in is was for on are with as by at be this have from or one had not but what all")
	text := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	logn := func(mu, sigma float64, lo, hi int) int {
		return min(max(int(math.Exp(mu+sigma*r.NormFloat64())), lo), hi)
	}
	type turn struct {
		From  string `json:"from"`
		Value string `json:"value"`
	}
	var convs []map[string]any
	for i := 0; i < n; i++ {
		convs = append(convs, map[string]any{"conversations": []turn{
			{"human", text(logn(4.5, 1.0, 5, 1500))}, {"gpt", text(logn(4.2, 0.8, 5, 400))}}})
	}
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	b, _ := json.Marshal(convs)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// datasetSweep predicts a closed-loop sweep of a dataset with the tuning
// v, as a live sweep records it: the entries counted at four characters a
// token, sampled with the seed, each level continuing through them, the
// sizing in every level's config.
func datasetSweep(t testing.TB, target Target, v []float64, path string, loads []float64, requests int) *results.Sweep {
	t.Helper()
	target.Models = tunedModels(target.Models, target.Model, v)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parsed, err := workload.ParseDataset(f, workload.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	count := bench.CharCounter{PerChar: 0.25}
	need := len(loads) * (requests + int(loads[len(loads)-1]))
	kept, _ := workload.Size(parsed.Entries, count, workload.ShareGPTFilters, 128, need, 7)
	ds := workload.Dataset{Entries: kept, DefaultMaxTokens: 128, ByLength: true,
		Blocks: workload.TraceBlocks{WordsPerToken: bench.Calibrate(target).WordsPerToken, Nonce: "[measured]", Seed: 7}}
	sw := &results.Sweep{Axis: "concurrency", Workload: "requests"}
	next := 0
	return bench.Sweep(context.Background(), &Virtual{Target: target}, bench.SweepOptions{Loads: loads, Parallel: 1, Sweep: sw, Level: func(_ int, load float64) (*bench.Level, error) {
		l := driver.Load{Concurrency: int(load), Requests: requests, Warmup: -1, Seed: 7, DrainTimeout: replayDrain}
		level := ds
		level.Offset = next
		next += requests + l.DefaultWarmup()
		cfg := results.Config{Workload: "dataset", Dataset: path, DatasetFormat: "sharegpt", Endpoint: "chat", Mode: "closed",
			Concurrency: int(load), MaxTokens: 128, Requests: requests, Warmup: l.DefaultWarmup(), Seed: 7,
			DatasetSizing: &results.DatasetSizing{Counter: "chars", CharsPerToken: 4, Kept: need, Offset: level.Offset,
				MinTokens: 4, MaxPromptTokens: 1024, MaxContext: 2048}}
		return &bench.Level{Work: bench.Requests{Source: level, Load: l}, Config: cfg}, nil
	}})
}

// TestCalibrateDatasetSweep: a ShareGPT-shaped sweep is replayed entry for
// entry (the file read again, counted and sampled as recorded, each level
// at its own offset), so from the tuning it was made with the replay
// reproduces it exactly, and from the shipped preset the fit recovers that
// tuning, which a replay of normal-distributed lengths could not.
func TestCalibrateDatasetSweep(t *testing.T) {
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	path := shareGPTShaped(t, 1500)
	loads := []float64{1, 4, 16, 48}
	measured := datasetSweep(t, target, truth, path, loads, 100)
	at := target
	at.Models = tunedModels(target.Models, target.Model, truth)
	for i, l := range measured.Levels {
		rp, note, err := Replay(at, l.Run, "[calibrate]")
		if err != nil || note != "" {
			t.Fatalf("level %d: replay %v (note %q)", i, err, note)
		}
		got, err := rp.Run(context.Background(), at.Models)
		if err != nil {
			t.Fatal(err)
		}
		if got.Tokens.InputTotal != l.Run.Tokens.InputTotal || got.Tokens.OutputTotal != l.Run.Tokens.OutputTotal ||
			got.Stats.TTFT.P90 != l.Run.Stats.TTFT.P90 || got.Stats.TPOT.Mean != l.Run.Stats.TPOT.Mean {
			t.Errorf("level %d replayed at the truth: tokens %d/%d against %d/%d, TTFT p90 %.3f against %.3f",
				i, got.Tokens.InputTotal, got.Tokens.OutputTotal, l.Run.Tokens.InputTotal, l.Run.Tokens.OutputTotal, got.Stats.TTFT.P90, l.Run.Stats.TTFT.P90)
		}
	}
	// With the file gone, the replay falls back to the measured length
	// distributions (the result's histograms), and says so.
	if err := os.Rename(path, path+".gone"); err != nil {
		t.Fatal(err)
	}
	if _, note, err := Replay(at, measured.Levels[0].Run, "[calibrate]"); err != nil || !strings.Contains(note, "measured length distributions") {
		t.Errorf("without the file: %v, note %q", err, note)
	}
	os.Rename(path+".gone", path)
	if testing.Short() {
		return
	}
	cal, _, err := Calibrate(context.Background(), CalibrateOptions{Measured: measured, Name: "truth", Target: target, Origin: "h100-80gb/llama-3.1-8b"})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range cal.Params {
		t.Logf("%-26s start %7.4f  fitted %7.4f ± %.4f  truth %7.4f (determined %v)", p.Name, p.Start, p.Value, p.StdErr, truth[i], p.Determined)
		if p.Determined && math.Abs(p.Value-truth[i]) > math.Max(3*p.StdErr, 0.05*truth[i]) {
			t.Errorf("%s: fitted %.4f ± %.4f, truth %.4f", p.Name, p.Value, p.StdErr, truth[i])
		}
	}
	if cal.Train.FittedPercent > 2 || cal.Train.FittedPercent >= cal.Train.StartPercent {
		t.Errorf("training error %.2f%% (start %.2f%%)", cal.Train.FittedPercent, cal.Train.StartPercent)
	}
}

// TestOpenLoopWindowIsItsSpan: an open loop bounded by a duration is
// measured over that duration, however early its last request finished,
// and its offered rate is the arrivals it held per second of it.
func TestOpenLoopWindowIsItsSpan(t *testing.T) {
	target := presetTarget(t, "h100-80gb/llama-3.1-8b")
	for _, tc := range []struct{ rate, burst float64 }{{0.5, 1}, {2, 0.05}} {
		syn := workload.Synthetic{Tokens: 64, MaxTokens: 8, Seed: 8}
		l := driver.Load{Rate: tc.rate, Burstiness: tc.burst, Duration: 20 * time.Second, Seed: 8, DrainTimeout: time.Minute}
		r, err := (&Virtual{Target: target}).Run(context.Background(), &bench.Level{Work: bench.Requests{Source: syn, Load: l}, Config: results.Config{Mode: "open", Rate: tc.rate}})
		if err != nil {
			t.Fatal(err)
		}
		n := float64(r.Arrivals.WindowArrivals)
		if math.Abs(r.WindowSeconds-20) > 0.5 || math.Abs(r.Arrivals.OfferedRate-n/20) > 1e-9 ||
			math.Abs(r.Throughput.RequestsPerS-float64(r.Requests.OK)/r.WindowSeconds) > 1e-9 {
			t.Errorf("rate %g burstiness %g: window %.2f s, %g arrivals offered at %.3f/s, throughput %.3f/s of %d ok",
				tc.rate, tc.burst, r.WindowSeconds, n, r.Arrivals.OfferedRate, r.Throughput.RequestsPerS, r.Requests.OK)
		}
	}
}
