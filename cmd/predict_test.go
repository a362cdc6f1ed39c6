package cmd

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/results"
)

// TestPredictAgreesWithLiveSweep sweeps the built-in simulator live and
// predicts the same sweep on the same seed and nonce. What is sent is the
// same request for request: counts and token totals are equal. Latencies
// agree to a few ms: the live sim places each arrival at the wall instant
// it got it (the client's send lateness and the loopback hop later than
// scheduled), and the live client's TTFT includes the HTTP path. The SLO
// knee is the same level.
func TestPredictAgreesWithLiveSweep(t *testing.T) {
	inBubble(t, testPredictAgreesWithLiveSweep)
}

func testPredictAgreesWithLiveSweep(t *testing.T) {
	t.Setenv("KNEE_RUN_NONCE", "feedc0de")
	url := startSim(t, "", "")
	dir := t.TempDir()
	flags := []string{"--rates", "2,6,12", "--step-duration", "3s", "--input-tokens", "2048", "--max-tokens", "64"}
	live, pred := liveAndPredicted(t, url, dir, flags, []string{"--model", "knee-sim"}, nil)
	if pred.Prediction == nil || pred.Prediction.ModelsYAML == "" || !pred.Config.Predicted {
		t.Fatalf("the predicted sweep does not say what it was predicted on: %+v", pred.Prediction)
	}
	if len(live.Levels) != 3 || len(pred.Levels) != 3 {
		t.Fatalf("%d live and %d predicted levels, want 3", len(live.Levels), len(pred.Levels))
	}
	for i := range live.Levels {
		l, p := live.Levels[i].Run, pred.Levels[i].Run
		if l.Requests.Sent != p.Requests.Sent || l.Tokens.InputTotal != p.Tokens.InputTotal || l.Tokens.OutputTotal != p.Tokens.OutputTotal {
			t.Errorf("level %g: live sent %d (%d in, %d out tokens), predicted %d (%d, %d)", live.Levels[i].Load,
				l.Requests.Sent, l.Tokens.InputTotal, l.Tokens.OutputTotal, p.Requests.Sent, p.Tokens.InputTotal, p.Tokens.OutputTotal)
		}
		for _, m := range []struct {
			name       string
			live, pred float64
		}{{"ttft_sched mean", l.Stats.TTFTSched.Mean, p.Stats.TTFTSched.Mean}, {"e2e_sched mean", l.Stats.E2ESched.Mean, p.Stats.E2ESched.Mean},
			{"ttft mean", l.Stats.TTFT.Mean, p.Stats.TTFT.Mean}} {
			if math.Abs(m.live-m.pred) > 5+0.05*m.live {
				t.Errorf("level %g: %s live %.1f ms, predicted %.1f ms", live.Levels[i].Load, m.name, m.live, m.pred)
			}
		}
	}
	// An arrival during a step is sent when due and waits in the engine,
	// as live: no predicted request waited for a slot that does not exist.
	for _, l := range pred.Levels {
		if w := l.Run.Arrivals.Waited; w != 0 {
			t.Errorf("level %g: %d predicted arrivals waited for a --max-concurrency slot, and none was set", l.Load, w)
		}
	}
	lk, pk := live.Knees.SLO, pred.Knees.SLO
	if (lk == nil) != (pk == nil) || lk != nil && lk.Load != pk.Load {
		t.Errorf("SLO knee live %+v, predicted %+v", lk, pk)
	}
}

// TestPredictDataset: a dataset is counted, filtered and sampled against
// the simulated server's tokenizer as a live sweep counts it against the
// live one, so both send the same prompts: equal counts and token totals.
func TestPredictDataset(t *testing.T) {
	t.Parallel()
	inBubble(t, testPredictDataset)
}

func testPredictDataset(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "prompts.jsonl")
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf(`{"prompt": %q, "max_tokens": %d}`, strings.Repeat("word ", 20+i*13)+fmt.Sprint(i), 8+i%5))
	}
	if err := os.WriteFile(ds, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startSim(t, "", "")
	flags := []string{"--rates", "4,8", "--requests", "20", "--dataset", ds}
	live, pred := liveAndPredicted(t, url, dir, flags, []string{"--model", "knee-sim", "--no-server-metrics"}, nil)
	for i := range live.Levels {
		l, p := live.Levels[i].Run, pred.Levels[i].Run
		if l.Requests.OK != 20 || l.Requests.Sent != p.Requests.Sent || l.Tokens.InputTotal != p.Tokens.InputTotal || l.Tokens.OutputTotal != p.Tokens.OutputTotal {
			t.Errorf("level %g: live %d ok of %d sent (%d in, %d out tokens), predicted %d sent (%d, %d)", live.Levels[i].Load,
				l.Requests.OK, l.Requests.Sent, l.Tokens.InputTotal, l.Tokens.OutputTotal, p.Requests.Sent, p.Tokens.InputTotal, p.Tokens.OutputTotal)
		}
		if p.Config.Dataset != ds || p.Config.DatasetFormat != "prompt" {
			t.Errorf("the predicted level does not name its dataset: %q %q", p.Config.Dataset, p.Config.DatasetFormat)
		}
	}
}

// TestPredictVoiceAgreesWithLive sweeps the call workload live against a
// simulator with a small KV cache (so the hit rate falls with load) and
// predicts it on the same seed and nonce: the same calls and turns, the
// same tokens, and cache-hit rates and TTFT that agree.
func TestPredictVoiceAgreesWithLive(t *testing.T) {
	inBubble(t, testPredictVoiceAgreesWithLive)
}

func testPredictVoiceAgreesWithLive(t *testing.T) {
	t.Setenv("KNEE_RUN_NONCE", "feedc0de")
	models := "testdata/small-kv.yml"
	url := startSim(t, models, "")
	dir := t.TempDir()
	flags := []string{"--workload", "voice", "--model", "small-kv", "--rates", "2,12", "--calls", "16", "--system-prompt-tokens", "1000",
		"--user-tokens", "20", "--turns", "4", "--gap", "300ms,500ms", "--output-tokens", "30"}
	live, pred := liveAndPredicted(t, url, dir, flags, []string{"--no-server-metrics"}, []string{"--sim-models", models})
	if len(live.Levels) != 2 || len(pred.Levels) != 2 {
		t.Fatalf("%d live and %d predicted levels, want 2", len(live.Levels), len(pred.Levels))
	}
	// Two calls a second keep nearly every turn warm and TTFT at a few ms: no
	// saturation there, live or predicted.
	for _, s := range []*results.Sweep{live, pred} {
		if k := s.Knees.Saturation; k != nil && k.Load == 2 {
			t.Errorf("%s: saturation at 2 calls/s", s.Label)
		}
	}
	for i := range live.Levels {
		l, p := live.Levels[i].Run, pred.Levels[i].Run
		load := live.Levels[i].Load
		if l.Calls == nil || p.Calls == nil || l.Calls.Started != p.Calls.Started || l.Calls.Completed != p.Calls.Completed {
			t.Fatalf("level %g: calls live %+v, predicted %+v", load, l.Calls, p.Calls)
		}
		if l.Requests.Sent != p.Requests.Sent || l.Tokens.OutputTotal != p.Tokens.OutputTotal {
			t.Errorf("level %g: live %d turns (%d out), predicted %d (%d)", load, l.Requests.Sent, l.Tokens.OutputTotal, p.Requests.Sent, p.Tokens.OutputTotal)
		}
		// Answers are the same text, so the histories, and the prompts, are
		// the same to the token.
		if l.Tokens.InputTotal != p.Tokens.InputTotal {
			t.Errorf("level %g: live %d prompt tokens, predicted %d", load, l.Tokens.InputTotal, p.Tokens.InputTotal)
		}
		lh, ph := l.Cache.HitRate, p.Cache.HitRate
		if math.Abs(lh-ph) > 0.05 {
			t.Errorf("level %g: cache-hit rate live %.3f, predicted %.3f", load, lh, ph)
		}
		if lm, pm := l.Stats.TTFT.Mean, p.Stats.TTFT.Mean; math.Abs(lm-pm) > 5+0.1*lm {
			t.Errorf("level %g: TTFT mean live %.1f ms, predicted %.1f ms", load, lm, pm)
		}
		t.Logf("level %g: hit rate live %.3f predicted %.3f; TTFT mean live %.1f predicted %.1f ms; p95 live %.1f predicted %.1f",
			load, lh, ph, l.Stats.TTFT.Mean, p.Stats.TTFT.Mean, l.Stats.TTFT.P95, p.Stats.TTFT.P95)
	}
}

// TestPredictFleet: --replicas and --routing reach the prediction and its
// file; a bad policy is a usage error.
func TestPredictFleet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := execute(t, "predict", "--sim-preset", "h100-80gb/llama-3.1-8b", "--workload", "voice", "--rates", "2", "--calls", "20",
		"--system-prompt-tokens", "2000", "--gap", "1s,2s", "--replicas", "4", "--routing", "prefix-affinity", "--out-dir", dir, "--label", "fleet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "4 replicas of h100-80gb/llama-3.1-8b behind a prefix-affinity router") {
		t.Errorf("the header does not say what served the load:\n%s", out)
	}
	s, err := results.ReadSweep(filepath.Join(dir, "fleet.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Prediction; p == nil || p.Replicas != 4 || p.Routing != "prefix-affinity" {
		t.Errorf("prediction %+v, want 4 replicas behind prefix-affinity", s.Prediction)
	}
	if code, _, _ := execute(t, "predict", "--replicas", "2", "--routing", "hash"); code != ExitUsage {
		t.Errorf("--routing hash: exit %d, want 2", code)
	}
	// No machine's memory holds 86 billion predicted requests: refused
	// before any runs, saying what fits.
	code, _, errOut = execute(t, "predict", "--rates", "1000000", "--step-duration", "24h")
	if code != ExitUsage || !strings.Contains(errOut, "shorten --duration to") {
		t.Errorf("a level past memory: exit %d, want 2 saying what fits:\n%s", code, errOut)
	}
}

// liveAndPredicted sweeps the simulator at url live (with liveOnly flags
// as well) and predicts the same sweep (with predOnly as well), both with
// flags and writing into dir, and reads the two sweep files.
func liveAndPredicted(t *testing.T, url, dir string, flags, liveOnly, predOnly []string) (live, pred *results.Sweep) {
	t.Helper()
	// Every level cold, as each predicted level's server is.
	args := append(append([]string{"sweep", "--base-url", url, "--label", "live", "--out-dir", dir, "--reset-cache"}, liveOnly...), flags...)
	if code, out, errOut := execute(t, args...); code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errOut)
	}
	args = append(append([]string{"predict", "--label", "pred", "--out-dir", dir}, predOnly...), flags...)
	code, out, errOut := execute(t, args...)
	if code != 0 {
		t.Fatalf("predict: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("\n%s", out)
	var err error
	if live, err = results.ReadSweep(filepath.Join(dir, "live.json")); err != nil {
		t.Fatal(err)
	}
	if pred, err = results.ReadSweep(filepath.Join(dir, "pred.json")); err != nil {
		t.Fatal(err)
	}
	return live, pred
}

// TestPredictStopsAtASignal checks that a signal (a cancelled context)
// stops a long prediction at once: it exits 130 within a second of the
// signal and writes the sweep so far, the level it cut short marked
// interrupted and left out of the knees, as a live sweep does.
func TestPredictStopsAtASignal(t *testing.T) {
	args := []string{"predict", "--sim-preset", "h100-80gb/llama-3.1-8b", "--step-duration", "20m", "--parallel", "1",
		"--input-tokens", "512", "--max-tokens", "128"}
	var dir string
	var code int
	var stopped time.Duration
	var out, errOut bytes.Buffer
	quiet.Live(t, 2, func(int) quiet.Try {
		// The signal comes once the first level (1,200 requests: 0.3 s
		// alone here, 2.3 s under the race detector) is done, as long again
		// as this machine took to predict it alone, and long before the
		// second (480,000) is.
		dir = t.TempDir()
		begin := time.Now()
		if c, o, e := execute(t, append(args, "--rates", "1", "--out-dir", dir, "--label", "first")...); c != 0 {
			t.Fatalf("the first level alone: exit %d\n%s\n%s", c, o, e)
		}
		alone := time.Since(begin)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var signalled time.Time
		time.AfterFunc(2*alone+500*time.Millisecond, func() { signalled = time.Now(); cancel() })
		out.Reset()
		errOut.Reset()
		try := quiet.During(func() {
			code = Execute(ctx, append(args, "--rates", "1,400", "--out-dir", dir, "--label", "long", "--records", filepath.Join(dir, "long.jsonl")), &out, &errOut)
			stopped = time.Since(signalled)
		})
		if code == ExitInterrupted && stopped <= time.Duration(raceSlowdown)*1500*time.Millisecond {
			return quiet.Try{} // on time, however busy the host
		}
		return try
	})
	t.Logf("stopped %v after the signal", stopped)
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d\n%s\n%s", code, ExitInterrupted, out.String(), errOut.String())
	}
	// Within a second and a half (0.3 s here, writing the cut level's
	// records), however many requests were queued; the race detector
	// slows the writing down as it does everything.
	if stopped > time.Duration(raceSlowdown)*1500*time.Millisecond {
		t.Errorf("the prediction went on %v after the signal", stopped)
	}
	s, err := results.ReadSweep(filepath.Join(dir, "long.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || len(s.Levels) != 2 || s.Levels[0].Run == nil || s.Levels[0].Run.Interrupted || s.Levels[1].Run == nil || !s.Levels[1].Run.Interrupted {
		t.Fatalf("sweep interrupted %v with %d levels; want the first whole and the second cut", s.Interrupted, len(s.Levels))
	}
	if n := s.Levels[0].Run.Requests.Sent; n < 1000 {
		t.Errorf("the whole level sent %d requests, want about 1,200", n)
	}
	lines, err := os.ReadFile(filepath.Join(dir, "long.jsonl"))
	if err != nil || bytes.Count(lines, []byte("\n")) < 1000 {
		t.Errorf("records: %d lines, %v", bytes.Count(lines, []byte("\n")), err)
	}
}

// TestPredictionsAreReproducible: the same flags predict the same files,
// byte for byte, records included, with no nonce given: the prompts'
// nonce is the seed's.
func TestPredictionsAreReproducible(t *testing.T) {
	t.Parallel()
	var files [2]map[string][]byte
	for i := range files {
		dir := t.TempDir()
		args := []string{"predict", "--sim-preset", "h100-80gb/llama-3.1-8b", "--rates", "4,16", "--step-duration", "30s",
			"--input-tokens", "512", "--max-tokens", "64", "--out-dir", dir, "--label", "p", "--records", filepath.Join(dir, "p.jsonl")}
		if code, out, errOut := execute(t, args...); code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		files[i] = map[string][]byte{}
		for _, ext := range []string{"json", "csv", "png", "jsonl"} {
			b, err := os.ReadFile(filepath.Join(dir, "p."+ext))
			if err != nil {
				t.Fatal(err)
			}
			files[i][ext] = b
		}
	}
	for ext, b := range files[0] {
		if !bytes.Equal(b, files[1][ext]) {
			t.Errorf("the two predictions' .%s files differ", ext)
		}
	}
}

// TestSweepPresetWithLevels: a sweep preset is checked and applied when
// the levels are given too. An unknown one was passed over unseen when
// --rates was given, and a known one dropped its SLO and what the
// built-in simulator serves, so the sweep ran on the default model.
func TestSweepPresetWithLevels(t *testing.T) {
	t.Parallel()
	code, _, errOut := execute(t, "predict", "--sweep-preset", "nonsense", "--rates", "1", "--duration", "1m", "--out-dir", t.TempDir())
	if code != ExitUsage || !strings.Contains(errOut, `unknown sweep preset "nonsense"`) {
		t.Errorf("exit %d, %q: want a usage error naming the preset", code, errOut)
	}
	dir := t.TempDir()
	code, out, errOut := execute(t, "predict", "--sweep-preset", "h100-80gb", "--workload", "voice", "--rates", "0.5",
		"--duration", "2m", "--label", "p", "--out-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "p.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "h100-80gb/gemma-3-12b") || len(sw.SLO.Bounds) != 1 || sw.SLO.Bounds[0].Ms != 300 ||
		len(sw.Levels) != 1 || sw.Levels[0].Load != 0.5 {
		t.Errorf("SLO %+v, %d levels, output %.200q: want the preset's H100 and 300 ms at the one rate given", sw.SLO, len(sw.Levels), out)
	}
}
