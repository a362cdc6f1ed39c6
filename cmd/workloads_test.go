package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kneebench/knee/results"
)

// writeLines writes JSONL lines to a file in a test's folder.
func writeLines(t *testing.T, name string, lines []any) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wordPrompts are n distinct prompts of about words words each.
func wordPrompts(n, words int, seed uint64) []any {
	r := rand.New(rand.NewPCG(seed, 1))
	vocab := strings.Fields("the of and to in is was for on are with as by at be this have from or one had not but what all were when we there can an your")
	out := make([]any, n)
	for i := range out {
		w := make([]string, words)
		for j := range w {
			w[j] = vocab[r.IntN(len(vocab))]
		}
		out[i] = map[string]any{"prompt": strings.Join(w, " ")}
	}
	return out
}

func cacheOf(t *testing.T, r *results.Run) (server, expected float64) {
	t.Helper()
	if r.Cache == nil || !r.Cache.Reported || r.Cache.Expected == nil {
		t.Fatalf("no cache figures: %+v", r.Cache)
	}
	return r.Cache.HitRate, *r.Cache.Expected
}

// TestNothingMeasuredIsWarm: against the built-in simulator, which caches
// prefixes, a dataset run, a synthetic run and a two-level dataset sweep
// find no measured prompt cached: the length probes, the calibration and
// the warm-up sent nothing a measured request shares, synthetic prompts
// share no opening, and the second level takes entries after the first's.
func TestNothingMeasuredIsWarm(t *testing.T) {
	t.Parallel()
	inBubble(t, testNothingMeasuredIsWarm)
}

func testNothingMeasuredIsWarm(t *testing.T) {
	url := startSim(t, "", "")
	ds := writeLines(t, "prompts.jsonl", wordPrompts(60, 120, 1))
	for _, args := range [][]string{
		{"--dataset", ds, "--requests", "20", "--concurrency", "2", "--max-tokens", "4"},
		{"--input-tokens", "300", "--requests", "30", "--concurrency", "3", "--max-tokens", "4"},
	} {
		r := runJSON(t, append([]string{"run", "--base-url", url}, args...)...)
		if r.Tokens.CachedTotal != 0 {
			t.Errorf("%v: %d of %d prompt tokens cached", args, r.Tokens.CachedTotal, r.Tokens.InputTotal)
		}
		if s, e := cacheOf(t, r); s != 0 || e != 0 {
			t.Errorf("%v: server %.3f, expected %.3f", args, s, e)
		}
	}
	// The same run again finds its prompts warm from the first, and says
	// the cache was warm from outside the run.
	again := runJSON(t, "run", "--base-url", url, "--dataset", ds, "--requests", "20", "--concurrency", "2", "--max-tokens", "4")
	if again.Tokens.CachedTotal == 0 || !strings.Contains(strings.Join(again.Warnings, "\n"), "warm from outside the run") {
		t.Errorf("a repeated run cached %d tokens; warnings %q", again.Tokens.CachedTotal, again.Warnings)
	}
	url = startSim(t, "", "")
	dir := t.TempDir()
	code, out, errOut := execute(t, "sweep", "--base-url", url, "--dataset", ds, "--rates", "40,80", "--requests", "20",
		"--max-tokens", "4", "--out-dir", dir, "--label", "ds")
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, errOut)
	}
	s, err := results.ReadSweep(filepath.Join(dir, "ds.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range s.Levels {
		if l.Run.Tokens.CachedTotal != 0 {
			t.Errorf("level %d: %d cached tokens (it resent an earlier level's prompts?)", i+1, l.Run.Tokens.CachedTotal)
		}
		if l.Run.Config.DatasetSizing == nil || l.Run.Config.DatasetSizing.Offset != 21*i {
			t.Errorf("level %d starts at %+v, want entry %d", i+1, l.Run.Config.DatasetSizing, 21*i)
		}
	}
	// --dataset-repeat resends level 1's prompts, which the server then
	// answers warm, and the run says so.
	code, _, _ = execute(t, "sweep", "--base-url", url, "--dataset", ds, "--rates", "40,80", "--requests", "20",
		"--max-tokens", "4", "--out-dir", dir, "--label", "rep", "--dataset-repeat")
	rep, err := results.ReadSweep(filepath.Join(dir, "rep.json"))
	if code != 0 || err != nil {
		t.Fatalf("repeat sweep: exit %d, %v", code, err)
	}
	if r := rep.Levels[1].Run; r.Tokens.CachedTotal == 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), "resent the prompts") {
		t.Errorf("with --dataset-repeat level 2 cached %d tokens; warnings %q", r.Tokens.CachedTotal, r.Warnings)
	}
}

// TestSharedPrefixesCacheAsExpected: a prefix pool and a trace's repeated
// hash ids are cached as much as the prompts' overlap says, within a few
// points.
func TestSharedPrefixesCacheAsExpected(t *testing.T) {
	t.Parallel()
	inBubble(t, testSharedPrefixesCacheAsExpected)
}

func testSharedPrefixesCacheAsExpected(t *testing.T) {
	url := startSim(t, "", "")
	pool := runJSON(t, "run", "--base-url", url, "--input-tokens", "64", "--prefix-tokens", "512", "--prefix-pool", "4",
		"--requests", "40", "--concurrency", "2", "--max-tokens", "4")
	s, e := cacheOf(t, pool)
	// 36 of 40 requests reuse one of the 4 prefixes: 512/576 × 36/40 = 0.8.
	if math.Abs(e-0.8) > 0.03 || math.Abs(s-e) > 0.03 {
		t.Errorf("prefix pool: server %.3f, expected %.3f, want both about 0.80", s, e)
	}
	if in := pool.Tokens.Input.Mean; math.Abs(in-576) > 576*0.03 {
		t.Errorf("prefix pool prompts averaged %.1f tokens, want 576", in)
	}
	var lines []any
	ids := [][]int{{0, 1}, {0, 1}, {0, 1, 2}, {7}, {7, 8}, {0, 1, 2}, {9}, {9}}
	for i, h := range ids {
		lines = append(lines, map[string]any{"timestamp": 100 * i, "input_length": 512*len(h) - 100, "output_length": 4, "hash_ids": h})
	}
	tr := runJSON(t, "run", "--base-url", url, "--dataset", writeLines(t, "trace.jsonl", lines))
	s, e = cacheOf(t, tr)
	if e < 0.3 || math.Abs(s-e) > 0.03 {
		t.Errorf("trace: server %.3f, expected %.3f", s, e)
	}
}

// TestTraceKeepsItsTimestamps: a Mooncake trace's requests are scheduled
// at its timestamps divided by the speedup, line k as request k, and go
// out within a few milliseconds of them.
func TestTraceKeepsItsTimestamps(t *testing.T) {
	t.Parallel()
	inBubble(t, testTraceKeepsItsTimestamps)
}

func testTraceKeepsItsTimestamps(t *testing.T) {
	url := startSim(t, "", "")
	stamps := []int{0, 40, 90, 300, 310, 320, 700, 1000}
	var lines []any
	for i, ms := range stamps {
		lines = append(lines, map[string]any{"timestamp": 5000 + ms, "input_length": 100 + i, "output_length": 2})
	}
	trace := writeLines(t, "trace.jsonl", lines)
	recs := filepath.Join(t.TempDir(), "recs.jsonl")
	r := runJSON(t, "run", "--base-url", url, "--dataset", trace, "--trace-speedup", "2", "--records", recs)
	if r.Requests.OK != int64(len(stamps)) || r.Config.TraceSpeedup != 2 || r.Config.Workload != "trace" {
		t.Fatalf("%d ok, speedup %v, workload %q", r.Requests.OK, r.Config.TraceSpeedup, r.Config.Workload)
	}
	f, err := os.Open(recs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var first int64 = -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l results.RecordLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Warmup {
			continue
		}
		if first < 0 {
			first = l.ScheduledUnixNs
		}
		want := time.Duration(stamps[l.Index]) * time.Millisecond / 2
		if got := time.Duration(l.ScheduledUnixNs - first); absDur(got-want) > time.Millisecond {
			t.Errorf("line %d scheduled at %v, want %v", l.Index, got, want)
		}
		if late := time.Duration(l.SentUnixNs - l.ScheduledUnixNs); late > 20*time.Millisecond {
			t.Errorf("line %d sent %v after its time", l.Index, late)
		}
		if l.PromptTokens == nil || *l.PromptTokens < 100+l.Index {
			t.Errorf("line %d: %v prompt tokens, want at least its %d", l.Index, l.PromptTokens, 100+l.Index)
		}
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// recordingServer answers every chat request with a short stream and keeps
// the messages it was sent.
func recordingServer(t *testing.T) (string, func() [][]map[string]string) {
	var mu sync.Mutex
	var got [][]map[string]string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
			return
		}
		var body struct {
			Messages []map[string]string `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got = append(got, body.Messages)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"live answer\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\ndata: [DONE]\n\n")
	})
	return serveHTTP(t, h) + "/v1", func() [][]map[string]string {
		mu.Lock()
		defer mu.Unlock()
		return append([][]map[string]string(nil), got...)
	}
}

// TestConversationReplaySendsHistory: an AIPerf multi_turn file replays as
// conversations: each turn carries the system prompt, every earlier turn
// and the recorded answer to it (or, with --replay-live-history, the
// server's own).
func TestConversationReplaySendsHistory(t *testing.T) {
	t.Parallel()
	inBubble(t, testConversationReplaySendsHistory)
}

func testConversationReplaySendsHistory(t *testing.T) {
	url, sent := recordingServer(t)
	file := writeLines(t, "sessions.jsonl", []any{map[string]any{"session_id": "s1", "turns": []any{
		map[string]any{"role": "system", "text": "be terse"},
		map[string]any{"text": "first question"},
		map[string]any{"role": "assistant", "text": "recorded answer"},
		map[string]any{"text": "second question", "delay": 10},
		map[string]any{"text": "third question", "delay": 10},
	}}})
	for _, live := range []bool{false, true} {
		before := len(sent())
		args := []string{"run", "--base-url", url, "--dataset", file, "--rate", "5", "--calls", "1", "--no-server-metrics"}
		if live {
			args = append(args, "--replay-live-history")
		}
		r := runJSON(t, args...)
		if r.Config.Workload != "conversations" || r.Requests.OK != 3 || r.Requests.Warmup != 0 {
			t.Fatalf("live %v: workload %q, %d ok, %d warm-up", live, r.Config.Workload, r.Requests.OK, r.Requests.Warmup)
		}
		turns := sent()[before:]
		// Probes come first; the call's turns are the last three.
		turns = turns[len(turns)-3:]
		for k, msgs := range turns {
			if len(msgs) != 2+2*k || msgs[0]["content"] != "be terse" || msgs[len(msgs)-1]["role"] != "user" {
				t.Fatalf("turn %d: %v", k+1, msgs)
			}
		}
		answer := turns[1][2]["content"]
		if want := map[bool]string{false: "recorded answer", true: "live answer"}[live]; answer != want {
			t.Errorf("live %v: turn 2 carries %q as turn 1's answer, want %q", live, answer, want)
		}
		if a := turns[2][4]["content"]; a != "live answer" {
			t.Errorf("turn 3 carries %q as turn 2's answer (none recorded): want the live one", a)
		}
	}
}

// TestGenerateEndpointEndToEnd: --endpoint generate drives the simulator's
// /generate (SGLang's native API) with prompts sized against its count.
func TestGenerateEndpointEndToEnd(t *testing.T) {
	t.Parallel()
	inBubble(t, testGenerateEndpointEndToEnd)
}

func testGenerateEndpointEndToEnd(t *testing.T) {
	url := startSim(t, "", "")
	r := runJSON(t, "run", "--base-url", url, "--endpoint", "generate", "--input-tokens", "100", "--max-tokens", "12",
		"--requests", "8", "--concurrency", "2", "--no-server-metrics")
	if r.Requests.OK != 8 || r.Tokens.OutputTotal != 96 || r.Stats.ITL.Count != 8*11 || math.Abs(r.Tokens.Input.Mean-100) > 3 || r.Config.Endpoint != "generate" {
		t.Errorf("%d ok, %d output tokens, %d gaps, input mean %.1f, endpoint %q", r.Requests.OK, r.Tokens.OutputTotal, r.Stats.ITL.Count, r.Tokens.Input.Mean, r.Config.Endpoint)
	}
}

// TestIgnoreEOS: a standalone knee sim (builtin:responses) ends answers at
// their own end of sequence, short of max_tokens; --ignore-eos sends
// ignore_eos and every answer runs to max_tokens, as against the built-in
// target, where it is the default.
func TestIgnoreEOS(t *testing.T) {
	t.Parallel()
	inBubble(t, testIgnoreEOS)
}

func testIgnoreEOS(t *testing.T) {
	url := startSimWith(t, "", "", "builtin:responses")
	args := []string{"run", "--base-url", url, "--model", "knee-sim-instant", "--requests", "30", "--concurrency", "3", "--max-tokens", "64",
		"--input-tokens", "32", "--no-server-metrics"}
	free := runJSON(t, args...)
	full := runJSON(t, append(args, "--ignore-eos")...)
	if free.Tokens.Output.Mean >= 63 {
		t.Errorf("without --ignore-eos the answers averaged %.1f of 64 tokens: the test's server does not stop early", free.Tokens.Output.Mean)
	}
	if full.Tokens.Output.Mean != 64 || !full.Config.IgnoreEOS {
		t.Errorf("with --ignore-eos the answers averaged %.1f of 64 tokens (recorded %v)", full.Tokens.Output.Mean, full.Config.IgnoreEOS)
	}
	// The built-in target is a child process: the real binary.
	out := filepath.Join(t.TempDir(), "builtin.json")
	cmd := exec.Command(kneeBinary(t), "run", "--requests", "3", "--max-tokens", "8", "--input-tokens", "16", "--no-server-metrics", "--quiet", "-o", out)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if builtin, err := results.ReadRun(out); err != nil || !builtin.Config.IgnoreEOS {
		t.Errorf("the built-in target's run did not ask for ignore_eos (%v)", err)
	}
	if code, _, errOut := execute(t, "run", "--base-url", url, "--ignore-eos", "--extra-body", `{"ignore_eos":false}`); code != ExitUsage ||
		!strings.Contains(errOut, "give one") {
		t.Errorf("--ignore-eos with --extra-body ignore_eos: exit %d, %q", code, errOut)
	}
}
