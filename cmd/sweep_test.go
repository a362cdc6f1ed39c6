package cmd

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// sweepSmallKV runs a short sweep against the small-cache scheduler model
// and returns the result and its files' folder.
func sweepSmallKV(t *testing.T, url, label string) (*results.Sweep, string) {
	t.Helper()
	dir := t.TempDir()
	code, out, errOut := execute(t, "sweep", "--base-url", url, "--model", "small-kv", "--rates", "4,8,16,32",
		"--step-duration", "3s", "--input-tokens", "1000", "--max-tokens", "32", "--label", label, "--out-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, ext := range []string{".json", ".csv", ".png"} {
		if fi, err := os.Stat(filepath.Join(dir, label+ext)); err != nil || fi.Size() == 0 {
			t.Errorf("%s%s missing or empty: %v", label, ext, err)
		}
	}
	s, err := results.ReadSweep(filepath.Join(dir, label+".json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out)
	return s, dir
}

func TestSweepAgainstSimulator(t *testing.T) {
	t.Parallel()
	inBubble(t, testSweepAgainstSimulator)
}

func testSweepAgainstSimulator(t *testing.T) {
	url := startSim(t, "testdata/small-kv.yml", "")
	s, dir := sweepSmallKV(t, url, "small")
	if len(s.Levels) != 4 {
		t.Fatalf("%d levels, want 4", len(s.Levels))
	}
	// The CSV rows match the JSON levels.
	f, _ := os.Open(filepath.Join(dir, "small.csv"))
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(s.Levels) || strings.Join(rows[0], ",") != strings.Join(results.CSVHeader, ",") {
		t.Fatalf("CSV has %d rows (header %v)", len(rows), rows[0])
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, l := range s.Levels {
		row := rows[i+1]
		load, _ := strconv.ParseFloat(row[col["load"]], 64)
		p95, _ := strconv.ParseFloat(row[col["ttft_sched_p95_ms"]], 64)
		if load != l.Load || p95 != l.Run.Stats.TTFTSched.P95 {
			t.Errorf("level %d: CSV load %v p95 %v, JSON %v %v", i, load, p95, l.Load, l.Run.Stats.TTFTSched.P95)
		}
		if row[col["server_ttft_p50_ms"]] == "" {
			t.Errorf("level %d: no server_* columns", i)
		}
	}
	// The SLO knee lies below the level where TTFT p95 explodes.
	explode := -1
	for i, l := range s.Levels {
		if l.Run.Stats.TTFTSched.P95 > 4*s.SLO.ThresholdMs() {
			explode = i
			break
		}
	}
	if explode < 0 {
		t.Fatalf("TTFT p95 never exploded: %v", p95s(s))
	}
	if s.Knees.SLO == nil || s.Knees.SLO.Index >= explode {
		t.Errorf("SLO knee %+v, want it below level %d (p95s %v)", s.Knees.SLO, explode, p95s(s))
	}
	if s.Knees.Curvature == nil {
		t.Errorf("no curvature knee on %v", p95s(s))
	}
}

func p95s(s *results.Sweep) []float64 {
	var out []float64
	for _, l := range s.Levels {
		if l.Run != nil {
			out = append(out, l.Run.Stats.TTFTSched.P95)
		}
	}
	return out
}

func TestCompare(t *testing.T) {
	t.Parallel()
	inBubble(t, testCompare)
}

func testCompare(t *testing.T) {
	url := startSim(t, "testdata/small-kv.yml", "")
	_, dirA := sweepSmallKVQuick(t, url, "A")
	_, dirB := sweepSmallKVQuick(t, url, "B")
	png := filepath.Join(t.TempDir(), "cmp.png")
	code, out, errOut := execute(t, "compare", filepath.Join(dirA, "A.json"), filepath.Join(dirB, "B.json"), "-o", png)
	if code != 0 || !strings.Contains(out, "SLO knee") || !strings.Contains(out, "peak throughput") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() < 1000 {
		t.Errorf("compare plot: %v", err)
	}
	// A page's name for the PNG is refused, pointing at knee report.
	code, _, errOut = execute(t, "compare", filepath.Join(dirA, "A.json"), filepath.Join(dirB, "B.json"), "-o", filepath.Join(t.TempDir(), "cmp.html"))
	if code != ExitUsage || !strings.Contains(errOut, "knee report") {
		t.Errorf("-o cmp.html: exit %d %q, want 2 naming knee report", code, errOut)
	}
	damaged := filepath.Join(t.TempDir(), "damaged.json")
	os.WriteFile(damaged, []byte(`{"schema_version": 1, "levels": [`), 0o644)
	code, _, errOut = execute(t, "compare", damaged)
	if code == 0 || !strings.Contains(errOut, "damaged.json") {
		t.Errorf("damaged file: exit %d %q, want an error naming the file", code, errOut)
	}
	other := filepath.Join(t.TempDir(), "v9.json")
	os.WriteFile(other, []byte(`{"schema_version": 9}`), 0o644)
	code, _, errOut = execute(t, "compare", other)
	if code == 0 || !strings.Contains(errOut, "schema version 9") {
		t.Errorf("other schema: exit %d %q", code, errOut)
	}
	run := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(run, []byte(`{"schema_version": 1, "stats": {}}`), 0o644)
	code, _, errOut = execute(t, "compare", run)
	if code == 0 || !strings.Contains(errOut, "not a sweep") {
		t.Errorf("a run file: exit %d %q", code, errOut)
	}
}

// sweepSmallKVQuick is a two-level sweep for tests that need any sweep.
func sweepSmallKVQuick(t *testing.T, url, label string) (*results.Sweep, string) {
	t.Helper()
	dir := t.TempDir()
	code, out, errOut := execute(t, "sweep", "--base-url", url, "--model", "small-kv", "--rates", "2,4",
		"--step-duration", "1s", "--input-tokens", "200", "--max-tokens", "8", "--label", label, "--out-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	s, err := results.ReadSweep(filepath.Join(dir, label+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// TestDrainCutsReachEveryView: a sweep whose drain timeout cuts most of a
// level's requests shows the share in its row, CSV and knees, and leaves
// the level out of the SLO knee with that reason.
func TestDrainCutsReachEveryView(t *testing.T) {
	t.Parallel()
	inBubble(t, testDrainCutsReachEveryView)
}

func testDrainCutsReachEveryView(t *testing.T) {
	url := startSim(t, "", "")
	dir := t.TempDir()
	code, out, errOut := execute(t, "sweep", "--base-url", url, "--model", "knee-sim", "--rates", "5", "--step-duration", "2s",
		"--input-tokens", "64", "--max-tokens", "400", "--drain-timeout", "50ms", "--out-dir", dir, "--label", "cut", "--no-server-metrics")
	if code != 0 && code != ExitFailed {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	s, err := results.ReadSweep(filepath.Join(dir, "cut.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := s.Levels[0].Run
	if r.MissingShare() < 0.5 {
		t.Fatalf("only %.0f%% cut; the test needs most of the level cut (%+v)", 100*r.MissingShare(), r.Requests)
	}
	if len(s.Knees.Excluded) != 1 || !strings.Contains(s.Knees.Excluded[0].Reason, "missing from its percentiles") || s.Knees.SLO != nil {
		t.Errorf("knees %+v: want the level left out of the SLO knee for its cut requests", s.Knees)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "cut.csv"))
	if !strings.Contains(string(csv), fmt.Sprintf(",%d,0,", r.Requests.Interrupted)) {
		t.Errorf("the CSV does not carry the %d cut requests:\n%s", r.Requests.Interrupted, csv)
	}
	if !strings.Contains(out, "excluded") || !strings.Contains(out, "warning 5/s") || !strings.Contains(out, fmt.Sprintf("%.1f%%", 100*r.MissingShare())) {
		t.Errorf("the printed sweep does not show the cut level:\n%s", out)
	}
}
