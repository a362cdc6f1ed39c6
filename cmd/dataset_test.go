package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

func runWithOutput(t *testing.T, args ...string) (*results.Run, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, errOut := execute(t, append(args, "--output", out, "--no-server-metrics")...)
	if code != 0 {
		t.Fatalf("knee %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r results.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r, stdout
}

// TestDatasetsDriveRuns: a ShareGPT file sized with a tokenizer.json asks
// each request for its reference answer's length (6 and 4 tokens with the
// fixture's tokenizer), which the simulator then generates exactly; chat
// and prompt JSONL files run too, sized against the server's own counts.
func TestDatasetsDriveRuns(t *testing.T) {
	t.Parallel()
	inBubble(t, testDatasetsDriveRuns)
}

func testDatasetsDriveRuns(t *testing.T) {
	url := startSim(t, "", "")
	share, tok := "../workload/testdata/sharegpt.json", "../workload/testdata/tokenizer.json"
	r, stdout := runWithOutput(t, "run", "--base-url", url, "--dataset", share, "--tokenizer", tok, "--requests", "4", "--concurrency", "1")
	if r.Tokens.OutputTotal != 20 || r.Config.DatasetFormat != "sharegpt" {
		t.Errorf("ShareGPT: %d output tokens (want 6+4+6+4 = 20), format %q", r.Tokens.OutputTotal, r.Config.DatasetFormat)
	}
	// Report lines wrap at 100 columns: compare with whitespace folded.
	flat := strings.Join(strings.Fields(stdout), " ")
	if !strings.Contains(flat, "counted with the tokenizer") || !strings.Contains(flat, "1 dropped by the length bounds") {
		t.Errorf("the report does not say how the dataset was sized:\n%s", stdout)
	}
	dir := t.TempDir()
	chat := filepath.Join(dir, "chat.jsonl")
	os.WriteFile(chat, []byte(`{"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Name a colour."}],"max_tokens":5}`+"\n"+
		`{"messages":[{"role":"user","content":"Name a fruit, please, any fruit at all."}],"max_tokens":3}`+"\n"), 0o644)
	r, stdout = runWithOutput(t, "run", "--base-url", url, "--dataset", chat, "--requests", "4", "--concurrency", "1")
	if r.Tokens.OutputTotal != 16 || r.Requests.OK != 4 {
		t.Errorf("chat JSONL: %d ok, %d output tokens (want 5+3+5+3 = 16)", r.Requests.OK, r.Tokens.OutputTotal)
	}
	if !strings.Contains(stdout, "estimated from") {
		t.Errorf("the report does not say the lengths were calibrated:\n%s", stdout)
	}
	prompts := filepath.Join(dir, "prompts.jsonl")
	os.WriteFile(prompts, []byte("{\"prompt\":\"Write a haiku about rain.\",\"max_tokens\":7}\n"), 0o644)
	if r, _ := runWithOutput(t, "run", "--base-url", url, "--dataset", prompts, "--requests", "2"); r.Tokens.OutputTotal != 14 {
		t.Errorf("prompt JSONL: %d output tokens, want 14", r.Tokens.OutputTotal)
	}
	// A broken file is a usage error naming the line and the formats.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"prompt\":\"ok\"}\n{\"prompt\": 3}\n"), 0o644)
	code, _, errOut := execute(t, "run", "--base-url", url, "--dataset", bad)
	if code != ExitUsage || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, `"prompt" must be a string`) {
		t.Errorf("broken dataset: exit %d, %q", code, errOut)
	}
}

// TestLengthSpreadMeasured: --input-tokens-stddev and --range-ratio spread
// the prompts the server counts; the run reports what it measured.
func TestLengthSpreadMeasured(t *testing.T) {
	t.Parallel()
	inBubble(t, testLengthSpreadMeasured)
}

func testLengthSpreadMeasured(t *testing.T) {
	url := startSim(t, "", "")
	r, _ := runWithOutput(t, "run", "--base-url", url, "--model", "knee-sim-instant", "--input-tokens", "300", "--input-tokens-stddev", "60",
		"--max-tokens", "20", "--max-tokens-stddev", "5", "--requests", "200", "--concurrency", "8")
	in, out := r.Tokens.Input, r.Tokens.Output
	if in.Mean < 285 || in.Mean > 315 || in.Stddev < 50 || in.Stddev > 70 {
		t.Errorf("input measured mean %.1f sd %.1f, want about 300 and 60", in.Mean, in.Stddev)
	}
	if out.Mean < 18.5 || out.Mean > 21.5 || out.Stddev < 4 || out.Stddev > 6 {
		t.Errorf("output measured mean %.1f sd %.1f, want about 20 and 5", out.Mean, out.Stddev)
	}
	r, _ = runWithOutput(t, "run", "--base-url", url, "--model", "knee-sim-instant", "--input-tokens", "300", "--range-ratio", "0.5",
		"--max-tokens", "8", "--requests", "200", "--concurrency", "8")
	if in := r.Tokens.Input; in.Min < 140 || in.Max > 460 || in.Mean < 280 || in.Mean > 320 {
		t.Errorf("range ratio 0.5: input min %.0f mean %.1f max %.0f, want within about [150, 450] around 300", in.Min, in.Mean, in.Max)
	}
}

// TestGoodputEndToEnd: --goodput reaches the run's JSON and report, and a
// goodput sweep names its SLO knee in good requests.
func TestGoodputEndToEnd(t *testing.T) {
	t.Parallel()
	inBubble(t, testGoodputEndToEnd)
}

func testGoodputEndToEnd(t *testing.T) {
	// Serial: its knees need a healthy client, which other tests' load
	// would make unhealthy.
	url := startSim(t, "", "")
	r, stdout := runWithOutput(t, "run", "--base-url", url, "--model", "knee-sim-instant", "--requests", "5", "--goodput", "ttft:10000,e2e:10000")
	if g := r.Goodput; g == nil || g.Good != 5 || g.Share != 1 || !strings.Contains(strings.Join(strings.Fields(stdout), " "), "goodput 100.0% of 5 finished requests met ttft ≤ 10000 ms, e2e ≤ 10000 ms") {
		t.Errorf("goodput %+v\n%s", r.Goodput, stdout)
	}
	dir := t.TempDir()
	code, stdout, errOut := execute(t, "sweep", "--base-url", url, "--model", "knee-sim-instant", "--rates", "2,4", "--step-duration", "1s",
		"--goodput", "ttft:10000", "--slo-metric", "goodput", "--slo", "95", "--out-dir", dir, "--label", "g", "--no-server-metrics")
	if flat := strings.Join(strings.Fields(stdout), " "); code != 0 || !strings.Contains(flat, "goodput of at least 95%") || !strings.Contains(flat, "good there") {
		t.Errorf("goodput sweep: exit %d\n%s\n%s", code, stdout, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "g.csv")); !strings.Contains(string(b), "goodput_share") {
		t.Errorf("CSV without goodput:\n%s", b)
	}
	if code, _, _ := execute(t, "sweep", "--base-url", url, "--slo-metric", "goodput"); code != ExitUsage {
		t.Errorf("--slo-metric goodput without --goodput: exit %d, want 2", code)
	}
}

// TestSweepRecordsCarryTheirLevel: a sweep's --records holds every
// request of every level, each with its level.
func TestSweepRecordsCarryTheirLevel(t *testing.T) {
	t.Parallel()
	inBubble(t, testSweepRecordsCarryTheirLevel)
}

func testSweepRecordsCarryTheirLevel(t *testing.T) {
	url := startSim(t, "", "")
	dir := t.TempDir()
	recs := filepath.Join(dir, "records.jsonl")
	code, stdout, errOut := execute(t, "sweep", "--base-url", url, "--model", "knee-sim-instant", "--rates", "3,6", "--step-duration", "1s",
		"--out-dir", dir, "--label", "r", "--records", recs, "--no-server-metrics")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	f, err := os.Open(recs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := results.ReadRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := results.ReadSweep(filepath.Join(dir, "r.json"))
	perLevel := map[float64]int64{}
	for _, l := range lines {
		if l.Level == nil {
			t.Fatal("a record without its level")
		}
		if !l.Warmup {
			perLevel[*l.Level]++
		}
	}
	for _, lv := range s.Levels {
		if got := perLevel[lv.Load]; got != lv.Run.Requests.Sent {
			t.Errorf("level %g: %d measured records, the result counts %d sent", lv.Load, got, lv.Run.Requests.Sent)
		}
	}
}
