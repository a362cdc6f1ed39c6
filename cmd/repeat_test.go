package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestRepeatRefused: what --repeat cannot do is refused before anything
// is sent.
func TestRepeatRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--repeat", "0", "--base-url", "http://127.0.0.1:1/v1"}, "--repeat must be 1–100"},
		{[]string{"predict", "--repeat", "101"}, "--repeat must be 1–100"},
		{[]string{"sweep", "--repeat", "2", "--shard", "0/2", "--base-url", "http://127.0.0.1:1/v1", "--rates", "1"}, "knee merge --repeats"},
	} {
		code, out, errOut := execute(t, append(c.args, "--out-dir", dir)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q%q; want usage error %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestRepeatPredict: a predicted sweep repeated three times keeps every
// repeat's figures under each pooled level, each from its own seed, the
// pooled counts their sum, and prints each figure with its interval and
// where the knees fell across the repeats.
func TestRepeatPredict(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := execute(t, "predict", "--rates", "4,8", "--step-duration", "20s", "--repeat", "3", "--label", "r", "--out-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"pooled over 3 repeats", "±", "across repeats  SLO knee"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	s, err := results.ReadSweep(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Repeats == nil || s.Repeats.Count != 3 || s.Repeats.Passes != 3 || len(s.Repeats.SLO.Loads) != 3 {
		t.Fatalf("sweep repeats %+v", s.Repeats)
	}
	for _, l := range s.Levels {
		rp := l.Run.Repeats
		if rp == nil || len(rp.Each) != 3 {
			t.Fatalf("level %g: repeats %+v", l.Load, rp)
		}
		seeds := map[uint64]bool{}
		var ok float64
		for _, e := range rp.Each {
			seeds[e.Seed] = true
			ok += e.Figures["throughput"]
		}
		if len(seeds) != 3 {
			t.Errorf("level %g: seeds %v, want three different", l.Load, seeds)
		}
		if iv, found := rp.Intervals["ttft_sched.p95"]; !found || iv.High < iv.Low {
			t.Errorf("level %g: ttft_sched.p95 interval %+v", l.Load, iv)
		}
		// Equal windows: the pooled rate is the repeats' mean.
		if got := l.Run.Throughput.RequestsPerS; got < ok/3*0.999 || got > ok/3*1.001 {
			t.Errorf("level %g: pooled %g req/s, repeats' mean %g", l.Load, got, ok/3)
		}
	}
}

// TestMergeRepeatsOfPredictions: two predictions, each from the seed one
// repeat of --repeat 2 drew, pooled by knee merge --repeats are --repeat
// 2's sweep exactly (figures, intervals, knees across repeats): pooling
// separate files is the same pooling. Pooling a run's repeats this way is
// how a sharded load is repeated.
func TestMergeRepeatsOfPredictions(t *testing.T) {
	dir := t.TempDir()
	predict := func(label string, args ...string) *results.Sweep {
		t.Helper()
		// One fixed prompt: a synthetic one's words follow the repeat's
		// seed and nonce, which separate runs draw otherwise.
		args = append([]string{"predict", "--rates", "2,6", "--step-duration", "20s", "--prompt", "Say hello.", "--max-tokens", "128",
			"--label", label, "--out-dir", dir}, args...)
		if code, out, errOut := execute(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		s, err := results.ReadSweep(filepath.Join(dir, label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	together := predict("together", "--repeat", "2")
	second := together.Levels[0].Run.Repeats.Each[1].Seed
	predict("first", "--seed", "1")
	predict("second", "--seed", fmt.Sprint(second))
	pooled := filepath.Join(dir, "pooled.json")
	code, out, errOut := execute(t, "merge", "--repeats", filepath.Join(dir, "second.json"), filepath.Join(dir, "first.json"), "-o", pooled)
	if code != 0 {
		t.Fatalf("merge --repeats: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Count(out, "SLO knee  ") != 1 || !strings.Contains(out, "pooled 2 repeats' sweeps into") {
		t.Errorf("want the knees said once and the files named:\n%s", out)
	}
	got, err := results.ReadSweep(pooled)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(got.Repeats)
	b, _ := json.Marshal(together.Repeats)
	if string(a) != string(b) || len(got.Levels) != len(together.Levels) {
		t.Fatalf("knees across repeats: pooled files %s, --repeat %s", a, b)
	}
	for i, l := range got.Levels {
		want := together.Levels[i].Run
		if l.Run.Stats.TTFTSched != want.Stats.TTFTSched || l.Run.Requests.OK != want.Requests.OK ||
			fmt.Sprint(l.Run.Repeats.Intervals) != fmt.Sprint(want.Repeats.Intervals) {
			t.Errorf("level %g: pooled files %+v (%d ok), --repeat %+v (%d ok)", l.Load, l.Run.Stats.TTFTSched, l.Run.Requests.OK, want.Stats.TTFTSched, want.Requests.OK)
		}
	}
	// A repeat's sharded parts are refused, naming the way.
	code, _, errOut = execute(t, "merge", "--repeats", filepath.Join(dir, "first.json"), filepath.Join(dir, "first.json"), filepath.Join(dir, "together.json"), "-o", filepath.Join(dir, "x.json"))
	if code != ExitUsage || !strings.Contains(errOut, "already pooled") {
		t.Errorf("a pooled sweep among the repeats: exit %d, %s", code, errOut)
	}
}

// TestRepeatSweepLive: a live sweep repeated twice runs every level once,
// then again, each repeat with prompts of its own (so the second finds
// none of the first's prefixes cached), and pools them.
func TestRepeatSweepLive(t *testing.T) {
	t.Parallel()
	inBubble(t, testRepeatSweepLive)
}

func testRepeatSweepLive(t *testing.T) {
	url := startSim(t, "", "")
	dir := t.TempDir()
	code, out, errOut := execute(t, "sweep", "--base-url", url, "--rates", "2,4", "--step-duration", "2s", "--repeat", "2",
		"--input-tokens", "256", "--max-tokens", "16", "--label", "live", "--out-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if i, j := strings.Index(out, "repeat 1 of 2"), strings.Index(out, "repeat 2 of 2"); i < 0 || j < i || !strings.Contains(out[j:], "pooled over 2 repeats") {
		t.Errorf("want repeat 1's rows, then repeat 2's, then the pooled table:\n%s", out)
	}
	s, err := results.ReadSweep(filepath.Join(dir, "live.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range s.Levels {
		rp := l.Run.Repeats
		if rp == nil || rp.Count != 2 || rp.Each[0].Seed == rp.Each[1].Seed {
			t.Fatalf("level %g: repeats %+v", l.Load, rp)
		}
		if c := l.Run.Cache; c == nil || !c.Reported {
			t.Errorf("level %g: knee sim reported no cache hits", l.Load)
		} else if c.HitRate > 0.5 {
			t.Errorf("level %g: %.0f%% of prompt tokens cached: a repeat found another's prompts", l.Load, 100*c.HitRate)
		}
	}
}

// TestRepeatRun: knee run --repeat pools its repeats into one result
// with each repeat's figures and a table of them.
func TestRepeatRun(t *testing.T) {
	t.Parallel()
	inBubble(t, testRepeatRun)
}

func testRepeatRun(t *testing.T) {
	url := startSim(t, "", "")
	out := filepath.Join(t.TempDir(), "run.json")
	recs := filepath.Join(t.TempDir(), "records.jsonl")
	code, stdout, errOut := execute(t, "run", "--base-url", url, "--rate", "5", "--duration", "1s", "--repeat", "3",
		"--input-tokens", "64", "--max-tokens", "8", "--output", out, "--records", recs)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	if !strings.Contains(errOut, "repeat 3 of 3:") || !strings.Contains(stdout, "mean ± 95%") {
		t.Errorf("want a line per repeat and the repeats' table:\n%s\n%s", stdout, errOut)
	}
	r, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	// Three one-second windows, pooled.
	if r.Repeats == nil || r.Repeats.Count != 3 || len(r.Repeats.Each) != 3 || r.WindowSeconds < 2.9 {
		t.Fatalf("repeats %+v, window %g s", r.Repeats, r.WindowSeconds)
	}
	// What is not pooled is each repeat's, kept: knee sim's own account
	// (exact, so with intervals across the repeats) and the slices.
	for i, e := range r.Repeats.Each {
		if e.Server == nil || e.Server.Source != "knee-sim" || len(e.Slices) == 0 {
			t.Errorf("repeat %d keeps server %+v and %d slices", i+1, e.Server, len(e.Slices))
		}
	}
	if _, ok := r.Repeats.ServerIntervals["TTFT p50"]; !ok || !strings.Contains(stdout, "the server's own account, repeat by repeat") {
		t.Errorf("no interval of the server's TTFT p50 across repeats (%v), or no table of it:\n%s", r.Repeats.ServerIntervals, stdout)
	}
	// Every record says which repeat sent it.
	b, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l results.RecordLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		seen[l.Repeat]++
	}
	if len(seen) != 3 || seen[1] == 0 || seen[2] == 0 || seen[3] == 0 {
		t.Errorf("records by repeat: %v, want repeats 1, 2 and 3", seen)
	}
}

// TestRepeatMix: a mix repeated pools each class repeat by repeat, in
// virtual time: every class of every level carries its three repeats
// (their seeds the level's), its interval, and its verdict on the pooled
// figures; the classes' requests add up to the level's; the class knees
// are found on the pooled levels, and each pass's on its own.
func TestRepeatMix(t *testing.T) {
	dir := t.TempDir()
	mix := writeFile(t, dir, "mix.yaml", chatBatchSLOMix)
	code, out, errOut := execute(t, "predict", "--mix", mix, "--rates", "8,24", "--step-duration", "30s", "--repeat", "3", "--label", "m", "--out-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	s, err := results.ReadSweep(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range s.Levels {
		r := l.Run
		if r == nil || r.Repeats == nil || len(r.Classes) != 2 {
			t.Fatalf("level %g: %+v", l.Load, l)
		}
		var ok int64
		for name, c := range r.Classes {
			ok += c.Requests.OK
			if c.Repeats == nil || c.Repeats.Count != 3 || c.MixClass == nil || c.MixClass.MetSLO == nil {
				t.Errorf("level %g class %s: repeats %+v, class %+v; want 3 repeats and a verdict", l.Load, name, c.Repeats, c.MixClass)
				continue
			}
			for i, e := range c.Repeats.Each {
				if e.Seed != r.Repeats.Each[i].Seed {
					t.Errorf("level %g class %s repeat %d: seed %d, the level's %d", l.Load, name, i+1, e.Seed, r.Repeats.Each[i].Seed)
				}
			}
			if _, ok := c.Repeats.Intervals["ttft_sched.p95"]; !ok {
				t.Errorf("level %g class %s: no ttft_sched.p95 interval", l.Load, name)
			}
		}
		if ok != r.Requests.OK {
			t.Errorf("level %g: the classes completed %d, the level %d", l.Load, ok, r.Requests.OK)
		}
	}
	if len(s.ClassKnees) != 2 || !strings.Contains(out, "class knee") {
		t.Errorf("class knees %+v\n%s", s.ClassKnees, out)
	}
	// Each pass's class knees, found on its own levels.
	for _, name := range []string{"chat", "batch"} {
		k := s.Repeats.Classes[name]
		if k == nil || len(k.Loads) != 3 || !strings.Contains(out, "across repeats  class "+name+"'s knee") {
			t.Errorf("class %s across repeats %+v\n%s", name, k, out)
		}
	}
}
