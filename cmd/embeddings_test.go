package cmd

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

const poolingModels = `
models:
  - name: embedder
    context_length: 8192
    engine: fixed_rate
    fixed_rate: {overhead_ms: 5, prefill_tokens_per_second: 200000, decode_tokens_per_second: 1000}
    pooling: {dimension: 64}
`

// TestEmbeddingsAgainstSim: --endpoint embeddings drives knee sim's
// pooling model with batches of four 64-token inputs: every request one
// answer of four vectors, its latency E2E (no TTFT, ITL or TPOT kept or
// printed), inputs a second four times the requests, the prompt tokens
// the batch's; a sweep's default SLO bounds E2E, and a TTFT bound is
// refused.
func TestEmbeddingsAgainstSim(t *testing.T) {
	t.Parallel()
	inBubble(t, testEmbeddingsAgainstSim)
}

func testEmbeddingsAgainstSim(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", poolingModels), "")
	out := filepath.Join(dir, "run.json")
	code, stdout, errOut := execute(t, "run", "--base-url", url, "--endpoint", "embeddings", "--batch-size", "4", "--input-tokens", "64",
		"--concurrency", "2", "--requests", "20", "--no-server-metrics", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	r, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Stats
	if r.Requests.OK != 20 || s.E2E.Count != 20 || s.TTFT.Count != 0 || s.ITL.Count != 0 || s.TPOT.Count != 0 || r.Tokens.OutputTotal != 0 ||
		math.Abs(r.Throughput.InputsPerS-4*r.Throughput.RequestsPerS) > 0.01*r.Throughput.InputsPerS || math.Abs(r.Tokens.Input.Mean-256) > 12 {
		t.Errorf("%d ok, e2e n=%d, ttft n=%d, itl n=%d, output %d, inputs/s %.1f at %.1f req/s, prompt mean %.1f",
			r.Requests.OK, s.E2E.Count, s.TTFT.Count, s.ITL.Count, r.Tokens.OutputTotal, r.Throughput.InputsPerS, r.Throughput.RequestsPerS, r.Tokens.Input.Mean)
	}
	if strings.Contains(stdout, "| TTFT ") || !strings.Contains(stdout, "inputs/s") {
		t.Errorf("the terminal shows a TTFT row, or no inputs/s:\n%s", stdout)
	}

	code, stdout, errOut = execute(t, "sweep", "--base-url", url, "--endpoint", "embeddings", "--batch-size", "8", "--input-tokens", "64",
		"--rates", "20,40", "--step-duration", "2s", "--no-server-metrics", "--out-dir", dir, "--label", "emb")
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, stdout, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "emb.json"))
	if err != nil {
		t.Fatal(err)
	}
	if b := sw.SLO.Bounds; len(b) != 1 || b[0].Metric != "e2e_sched" || sw.Levels[0].Verdict == nil || !sw.Levels[0].Verdict.Judged {
		t.Errorf("sweep SLO %+v, first verdict %+v; want the default bound on e2e_sched, judged", sw.SLO.Bounds, sw.Levels[0].Verdict)
	}
	for _, bad := range [][]string{
		{"sweep", "--base-url", url, "--endpoint", "embeddings", "--rates", "5", "--slo", "ttft_p95:100"},
		{"run", "--base-url", url, "--batch-size", "4", "--requests", "1"},
		{"run", "--base-url", url, "--endpoint", "embeddings", "--batch-size", "5000", "--requests", "1"},
	} {
		if code, _, errOut := execute(t, bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, %s; want a usage error", bad, code, errOut)
		}
	}
}

// TestEmbeddingsPredicted: knee predict runs an embeddings workload in
// virtual time on a preset model made an encoder of its architecture:
// each request's inputs prefilled, no decode, E2E its latency; a second
// batch size doubles the prompt tokens a request; knee plan sizes a
// fleet for it; a pooling model asked to generate is refused.
func TestEmbeddingsPredicted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	predicted := func(label string, batch string) *results.Run {
		code, stdout, errOut := execute(t, "predict", "--sim-preset", "h100-80gb/llama-3.1-8b", "--endpoint", "embeddings", "--batch-size", batch,
			"--input-tokens", "128", "--rates", "50", "--step-duration", "20s", "--out-dir", dir, "--label", label)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return sw.Levels[0].Run
	}
	r8, r16 := predicted("b8", "8"), predicted("b16", "16")
	for _, r := range []*results.Run{r8, r16} {
		if r.Requests.OK == 0 || r.Stats.TTFT.Count != 0 || r.Stats.E2E.Count != r.Requests.OK || r.Tokens.OutputTotal != 0 || r.Throughput.InputsPerS == 0 {
			t.Errorf("%d ok, ttft n=%d, e2e n=%d, output %d, inputs/s %.1f", r.Requests.OK, r.Stats.TTFT.Count, r.Stats.E2E.Count, r.Tokens.OutputTotal, r.Throughput.InputsPerS)
		}
	}
	if ratio := r16.Tokens.Input.Mean / r8.Tokens.Input.Mean; math.Abs(ratio-2) > 0.05 || r16.Stats.E2E.P50 <= r8.Stats.E2E.P50 {
		t.Errorf("batch 16 vs 8: prompt tokens %.0f vs %.0f, E2E p50 %.2f vs %.2f ms", r16.Tokens.Input.Mean, r8.Tokens.Input.Mean, r16.Stats.E2E.P50, r8.Stats.E2E.P50)
	}
	code, out, errOut := execute(t, "plan", "--endpoint", "embeddings", "--batch-size", "8", "--input-tokens", "128", "--rate", "20",
		"--slo", "e2e_p95:1000", "--gpus", "l40s", "--models", "llama-3.1-8b", "--window", "1m", "--out-dir", dir, "--label", "emb-plan")
	if code != 0 || !strings.Contains(out, "e2e p95") {
		t.Errorf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	models := writeFile(t, dir, "m.yml", poolingModels)
	if code, _, errOut := execute(t, "predict", "--sim-models", models, "--rates", "1", "--out-dir", dir); code != ExitUsage || !strings.Contains(errOut, "pooling model") {
		t.Errorf("a pooling model predicted generating: exit %d, %s", code, errOut)
	}
}

// TestRerankAgainstSim: --endpoint rerank --documents 6 ranks six
// documents a request against a query on knee sim's pooling model, live
// and predicted: pairs a second six times the requests, no token
// timings; --documents without rerank is refused.
func TestRerankAgainstSim(t *testing.T) {
	t.Parallel()
	inBubble(t, testRerankAgainstSim)
}

func testRerankAgainstSim(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", poolingModels), "")
	r := runJSON(t, "run", "--base-url", url, "--endpoint", "rerank", "--documents", "6", "--input-tokens", "64",
		"--concurrency", "2", "--requests", "12", "--no-server-metrics")
	if r.Requests.OK != 12 || r.Stats.TTFT.Count != 0 || math.Abs(r.Throughput.InputsPerS-6*r.Throughput.RequestsPerS) > 0.01*r.Throughput.InputsPerS || r.Tokens.InputTotal == 0 {
		t.Errorf("%d ok, ttft n=%d, pairs/s %.1f at %.1f req/s, prompt %d", r.Requests.OK, r.Stats.TTFT.Count, r.Throughput.InputsPerS, r.Throughput.RequestsPerS, r.Tokens.InputTotal)
	}
	code, stdout, errOut := execute(t, "predict", "--sim-preset", "h100-80gb/llama-3.1-8b", "--endpoint", "rerank", "--documents", "6",
		"--input-tokens", "64", "--rates", "10", "--step-duration", "10s", "--out-dir", dir, "--label", "rr")
	if code != 0 {
		t.Fatalf("predict: exit %d\n%s\n%s", code, stdout, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "rr.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := sw.Levels[0].Run; p.Requests.OK == 0 || p.Stats.E2E.Count != p.Requests.OK || p.Throughput.InputsPerS == 0 {
		t.Errorf("predicted: %d ok, e2e n=%d, pairs/s %.1f", p.Requests.OK, p.Stats.E2E.Count, p.Throughput.InputsPerS)
	}
	if code, _, _ := execute(t, "run", "--base-url", url, "--documents", "4", "--requests", "1"); code != ExitUsage {
		t.Errorf("--documents over chat: exit %d, want a usage error", code)
	}
}

// TestScoreAgainstSim: --endpoint score --documents 3 scores a query
// against three documents a request on knee sim's pooling model.
func TestScoreAgainstSim(t *testing.T) {
	t.Parallel()
	inBubble(t, testScoreAgainstSim)
}

func testScoreAgainstSim(t *testing.T) {
	url := startSim(t, writeFile(t, t.TempDir(), "models.yml", poolingModels), "")
	r := runJSON(t, "run", "--base-url", url, "--endpoint", "score", "--documents", "3", "--input-tokens", "32",
		"--concurrency", "2", "--requests", "8", "--no-server-metrics")
	if r.Requests.OK != 8 || r.Stats.TTFT.Count != 0 || math.Abs(r.Throughput.InputsPerS-3*r.Throughput.RequestsPerS) > 0.01*r.Throughput.InputsPerS {
		t.Errorf("%d ok (%v), ttft n=%d, pairs/s %.1f at %.1f req/s", r.Requests.OK, r.Requests.Errors, r.Stats.TTFT.Count, r.Throughput.InputsPerS, r.Throughput.RequestsPerS)
	}
}

// TestEmbeddingsSweepKnee: an embeddings sweep against knee sim's
// batching engine finds where throughput stops following the offered
// load. An L40S's llama-3.1-8b as an encoder prefills 8 × 128-token
// inputs a request; it serves some 10.7 requests a second (knee predict
// of the same model), so a sweep at 3, 6, 24 and 36 a second keeps up
// with the first two and not the last two.
func TestEmbeddingsSweepKnee(t *testing.T) {
	t.Parallel()
	inBubble(t, testEmbeddingsSweepKnee)
}

func testEmbeddingsSweepKnee(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", `
models:
  - name: encoder
    preset: l40s/llama-3.1-8b
    pooling: {dimension: 64}
`), "")
	code, out, errOut := execute(t, "sweep", "--base-url", url, "--model", "encoder", "--endpoint", "embeddings", "--batch-size", "8",
		"--input-tokens", "128", "--rates", "3,6,24,36", "--step-duration", "4s", "--drain-timeout", "2s", "--no-server-metrics", "--out-dir", dir, "--label", "emb")
	if code != 0 && code != ExitFailed {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "emb.json"))
	if err != nil {
		t.Fatal(err)
	}
	sat := sw.Knees.Saturation
	if sat == nil || sat.Load < 6 || sat.Load > 24 {
		t.Fatalf("saturation knee %+v; want it past 6/s and by 24/s", sat)
	}
	for _, l := range sw.Levels {
		t.Logf("level %g/s: %.1f req/s, %.1f inputs/s, E2E p50 %.1f ms", l.Load, l.Run.Throughput.RequestsPerS, l.Run.Throughput.InputsPerS, l.Run.Stats.E2E.P50)
		if r := l.Run; r.Throughput.InputsPerS == 0 || r.Stats.TTFT.Count != 0 {
			t.Errorf("level %g: inputs/s %.1f, TTFT n=%d", l.Load, r.Throughput.InputsPerS, r.Stats.TTFT.Count)
		}
	}
}
