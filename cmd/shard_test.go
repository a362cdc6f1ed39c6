package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
)

// TestShardsMergeToOneProcess runs an open-loop, a closed-loop and a call
// workload once in one process and once as four shard processes started
// together, against one simulator on the same seed and nonce, and merges
// the shards. The merge sends what the one process sent, to the request
// and the token, draws the same schedule, and its percentiles are those of
// the shards' pooled records.
//
// It judges counts and merged percentiles, not timing, so it runs beside
// the other tests, its workloads side by side.
func TestShardsMergeToOneProcess(t *testing.T) {
	t.Parallel()
	quiet.Wire(t, func() { testShardsMergeToOneProcess(t) })
}

func testShardsMergeToOneProcess(t *testing.T) {
	bin := kneeBinary(t)
	url := startSim(t, "", "")
	for _, w := range []struct {
		name string
		args []string
		// late starts shard 3 this long after --start-at, as a pod
		// scheduled late would: it must keep the schedule, not shift it.
		late time.Duration
	}{
		{"open", []string{"--model", "knee-sim", "--rate", "30", "--requests", "80", "--input-tokens", "64", "--max-tokens", "8", "--slice", "1s"}, 0},
		{"open, shard 3 late", []string{"--model", "knee-sim", "--rate", "30", "--requests", "80", "--input-tokens", "64", "--max-tokens", "8"}, 1200 * time.Millisecond},
		{"closed", []string{"--model", "knee-sim", "--concurrency", "8", "--requests", "64", "--input-tokens", "64", "--max-tokens", "8"}, 0},
		{"voice", []string{"--model", "knee-sim", "--workload", "voice", "--rate", "6", "--calls", "12", "--system-prompt-tokens", "300",
			"--user-tokens", "10", "--turns", "3", "--gap", "50ms,100ms", "--output-tokens", "8"}, 0},
	} {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			single := filepath.Join(dir, "single.json")
			args := append([]string{"run", "--base-url", url, "--seed", "11", "--no-server-metrics"}, w.args...)
			if code, out, errOut := executeCtx(t, bench.WithNonce(context.Background(), "5eed5eed"), append(args, "--output", single)...); code != 0 {
				t.Fatalf("one process: exit %d\n%s\n%s", code, out, errOut)
			}
			at := time.Now().Add(3 * time.Second)
			startAt := at.Format(time.RFC3339Nano)
			var wg sync.WaitGroup
			files := make([]string, 4)
			errs := make([]error, 4)
			for i := range 4 {
				files[i] = filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i == 3 && w.late > 0 {
						time.Sleep(time.Until(at.Add(w.late)))
					}
					cmd := exec.Command(bin, append(args, "--shard", fmt.Sprintf("%d/4", i), "--start-at", startAt, "--output", files[i],
						"--records", filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i)))...)
					cmd.Env = append(os.Environ(), "KNEE_RUN_NONCE=5eed5eed")
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					if err := cmd.Run(); err != nil {
						errs[i] = fmt.Errorf("shard %d: %v\n%s", i, err, out.String())
					}
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			merged := filepath.Join(dir, "merged.json")
			if code, out, errOut := execute(t, append([]string{"merge", "-o", merged}, files...)...); code != 0 {
				t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
			}
			one, err := results.ReadRun(single)
			if err != nil {
				t.Fatal(err)
			}
			m, err := results.ReadRun(merged)
			if err != nil {
				t.Fatal(err)
			}
			if m.MergedShards != 4 {
				t.Errorf("merged_shards %d, want 4", m.MergedShards)
			}
			// The merged file is a normal result.
			if code, _, errOut := execute(t, "report", merged, "-o", filepath.Join(dir, "merged.html")); code != 0 {
				t.Errorf("knee report of the merged file: exit %d\n%s", code, errOut)
			}
			for _, c := range []struct {
				what      string
				one, more int64
			}{
				{"requests sent", one.Requests.Sent, m.Requests.Sent},
				{"requests ok", one.Requests.OK, m.Requests.OK},
				{"warm-up requests", one.Requests.Warmup, m.Requests.Warmup},
				{"input tokens", one.Tokens.InputTotal, m.Tokens.InputTotal},
				{"output tokens", one.Tokens.OutputTotal, m.Tokens.OutputTotal},
				{"window arrivals", one.Arrivals.WindowArrivals, m.Arrivals.WindowArrivals},
			} {
				if c.one != c.more {
					t.Errorf("%s: one process %d, four shards merged %d", c.what, c.one, c.more)
				}
			}
			if one.Arrivals.OfferedRate != m.Arrivals.OfferedRate {
				t.Errorf("offered rate: one process %g, merged %g", one.Arrivals.OfferedRate, m.Arrivals.OfferedRate)
			}
			if one.Calls != nil && (m.Calls == nil || m.Calls.Started != one.Calls.Started || m.Calls.Completed != one.Calls.Completed) {
				t.Errorf("calls: one process %+v, merged %+v", one.Calls, m.Calls)
			}
			// The per-turn table is rebuilt from the shards' histograms.
			if len(m.ByTurn) != len(one.ByTurn) {
				t.Errorf("per-turn table: one process %d turns, merged %d", len(one.ByTurn), len(m.ByTurn))
			}
			for i := range min(len(m.ByTurn), len(one.ByTurn)) {
				if a, b := one.ByTurn[i], m.ByTurn[i]; a.Turn != b.Turn || a.TTFT.Count != b.TTFT.Count || a.ITL.Count != b.ITL.Count {
					t.Errorf("turn %d: one process %d TTFTs and %d ITLs, merged turn %d: %d and %d", a.Turn, a.TTFT.Count, a.ITL.Count, b.Turn, b.TTFT.Count, b.ITL.Count)
				}
			}
			lateSaid := false
			for _, warn := range m.Warnings {
				t.Logf("merge warning: %s", warn)
				lateSaid = lateSaid || strings.Contains(warn, "shard 3 started")
			}
			if w.late > 0 && !lateSaid {
				t.Errorf("the merge does not name shard 3, started %v late", w.late)
			}
			if one.Slices != nil {
				sameSlices(t, one, m)
			}
			pooled := pooledTTFTSched(t, dir)
			for _, p := range []float64{50, 90, 95, 99} {
				want := float64(pooled.ValueAtPercentile(p)) / 1000
				if got := m.Stats.TTFTSched.At(p); got != want {
					t.Errorf("ttft_sched p%g: merged %.3f ms, pooled records %.3f ms", p, got, want)
				}
			}
			if m.Stats.TTFTSched.Count != pooled.TotalCount() {
				t.Errorf("merged %d ttft_sched values, pooled records %d", m.Stats.TTFTSched.Count, pooled.TotalCount())
			}
		})
	}
}

// sameSlices holds that the shards' merged slices count what one
// process's did: the arrivals due in each slice are one schedule's, split
// four ways and joined again, and every measured request is in one, in
// either.
func sameSlices(t *testing.T, one, m *results.Run) {
	t.Helper()
	if len(m.Slices) == 0 || m.SliceS != one.SliceS {
		t.Fatalf("merged: %d slices of %g s, one process %d of %g s (notes %q)", len(m.Slices), m.SliceS, len(one.Slices), one.SliceS, m.Notes)
	}
	var s1, c1 int64
	for _, sl := range one.Slices {
		s1 += sl.Sent
		c1 += sl.TTFTSched.Count
	}
	if s1 != one.Requests.Sent || c1 != one.Stats.TTFTSched.Count {
		// A closed loop's first requests are due as their streams'
		// warm-ups end, before the window opens: they are the first
		// slice's.
		t.Errorf("one process: the slices hold %d requests and %d TTFTs; the run %d and %d", s1, c1, one.Requests.Sent, one.Stats.TTFTSched.Count)
	}
	var sent, counted int64
	for k, sl := range m.Slices {
		sent += sl.Sent
		counted += sl.TTFTSched.Count
		if k < len(one.Slices) && sl.Sent != one.Slices[k].Sent {
			t.Errorf("slice %d: %d due merged, %d in one process", k, sl.Sent, one.Slices[k].Sent)
		}
	}
	if sent != m.Requests.Sent || counted != m.Stats.TTFTSched.Count {
		t.Errorf("the merged slices hold %d requests and %d TTFTs; the run %d and %d", sent, counted, m.Requests.Sent, m.Stats.TTFTSched.Count)
	}
}

// pooledTTFTSched records every shard's measured, successful requests'
// ttft_sched into one histogram, as the bench records them.
func pooledTTFTSched(t *testing.T, dir string) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	paths, _ := filepath.Glob(filepath.Join(dir, "shard-*.jsonl"))
	if len(paths) != 4 {
		t.Fatalf("%d record files, want 4", len(paths))
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := results.ReadRecords(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if l.Warmup || l.Error != "" || l.TTFTSchedNs == nil {
				continue
			}
			_ = h.RecordValue(max(time.Duration(*l.TTFTSchedNs).Microseconds(), 0))
		}
	}
	return h
}

// TestShardedSweepMerges: two shards of a two-level sweep, started
// together level by level, merge into one sweep whose levels hold both
// shards' requests and whose knees are found again.
func TestShardedSweepMerges(t *testing.T) {
	t.Parallel()
	quiet.Wire(t, func() { testShardedSweepMerges(t) })
}

func testShardedSweepMerges(t *testing.T) {
	bin := kneeBinary(t)
	url := startSim(t, "", "")
	dir := t.TempDir()
	startAt := time.Now().Add(3 * time.Second)
	args := []string{"sweep", "--base-url", url, "--model", "knee-sim-instant", "--rates", "20,40", "--requests", "40", "--seed", "3",
		"--no-server-metrics", "--out-dir", dir, "--start-at", fmt.Sprintf("%.3f", float64(startAt.UnixMilli())/1000), "--level-interval", "4s"}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(bin, append(args, "--shard", fmt.Sprintf("%d/2", i), "--label", fmt.Sprintf("s%d", i))...).CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("shard %d: %v\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	merged := filepath.Join(dir, "merged.json")
	code, out, errOut := execute(t, "merge", "-o", merged, filepath.Join(dir, "s0.json"), filepath.Join(dir, "s1.json"))
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
	}
	s, err := results.ReadSweep(merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".csv", ".png"} {
		if _, err := os.Stat(filepath.Join(dir, "merged"+ext)); err != nil {
			t.Errorf("no %s beside the merged sweep: %v", ext, err)
		}
	}
	if code, _, errOut := execute(t, "compare", merged, filepath.Join(dir, "s0.json")); code != 0 {
		t.Errorf("knee compare of the merged sweep: exit %d\n%s", code, errOut)
	}
	for _, l := range s.Levels {
		if l.Run == nil || l.Run.MergedShards != 2 || l.Run.Requests.Sent != 40 {
			t.Fatalf("level %g: %+v (error %q), want both shards' 40 requests", l.Load, l.Run, l.Error)
		}
		for _, w := range l.Run.Warnings {
			// The merge's own warnings of shards out of step; a slice the
			// host starved ("wake-ups … late") is the host's, not theirs.
			if strings.Contains(w, "went out late") || strings.Contains(w, "apart") {
				t.Errorf("level %g: %s", l.Load, w)
			}
		}
	}
}
