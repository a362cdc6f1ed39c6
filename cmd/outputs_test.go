package cmd

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/results"
)

// TestOutputFolderIsRefusedBeforeMeasuring: --output DIR used to measure
// the whole run and then fail on the rename.
func TestOutputFolderIsRefusedBeforeMeasuring(t *testing.T) {
	t.Parallel()
	inBubble(t, testOutputFolderIsRefusedBeforeMeasuring)
}

func testOutputFolderIsRefusedBeforeMeasuring(t *testing.T) {
	url := startSim(t, "", "")
	dir := t.TempDir()
	for _, flag := range []string{"--output", "--records"} {
		start := time.Now()
		code, stdout, errOut := execute(t, "run", "--base-url", url, "--requests", "50", flag, dir)
		if code != ExitRuntime || !strings.Contains(errOut, "is a folder") || strings.Contains(stdout, "ok ·") {
			t.Errorf("%s DIR: exit %d, stderr %q, stdout %q; want exit 3 before any measurement", flag, code, errOut, stdout)
		}
		if time.Since(start) > 2*time.Second {
			t.Errorf("%s DIR took %v: it measured first", flag, time.Since(start))
		}
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	code, stdout, errOut := execute(t, "sweep", "--base-url", url, "--rates", "1", "--step-duration", "1s", "--out-dir", file)
	if code != ExitRuntime || !strings.Contains(errOut, "not a folder") || strings.Contains(stdout, "healthy") {
		t.Errorf("--out-dir FILE: exit %d, stderr %q; want exit 3 before the first level", code, errOut)
	}
}

// TestOutputDashIsStdout: --output - puts the JSON alone on standard output
// and the report on stderr.
func TestOutputDashIsStdout(t *testing.T) {
	t.Parallel()
	inBubble(t, testOutputDashIsStdout)
}

func testOutputDashIsStdout(t *testing.T) {
	url := startSim(t, "", "")
	code, stdout, errOut := execute(t, "run", "--base-url", url, "--requests", "3", "--output", "-", "--no-server-metrics")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r results.Run
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Requests.OK != 3 {
		t.Errorf("stdout is not the run's JSON (%v): %.200q", err, stdout)
	}
	if !strings.Contains(errOut, "requests 3 ok") {
		t.Errorf("the report is not on stderr: %q", errOut)
	}
}

// TestRecordsWriteErrorExitsThree: records streamed to a FIFO whose reader
// goes away fail to write; knee still writes --output and reports the
// loss with exit 3 instead of "wrote" and 0.
//
// It runs on the wall clock: a FIFO's ends meet in system calls, which a
// synctest bubble's clock cannot wait out.
func TestRecordsWriteErrorExitsThree(t *testing.T) {
	t.Parallel()
	quiet.Wire(t, func() { testRecordsWriteErrorExitsThree(t) })
}

func testRecordsWriteErrorExitsThree(t *testing.T) {
	url := startSim(t, "", "")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "records")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			return
		}
		_, _ = io.ReadFull(f, make([]byte, 1))
		f.Close()
	}()
	out := filepath.Join(dir, "run.json")
	code, _, errOut := execute(t, "run", "--base-url", url, "--model", "knee-sim-instant", "--requests", "400", "--concurrency", "8", "--records", fifo, "--output", out, "--no-server-metrics")
	if code != ExitRuntime || !strings.Contains(errOut, "records") {
		t.Errorf("exit %d, stderr %q; want 3 naming the records file", code, errOut)
	}
	if _, err := results.ReadRun(out); err != nil {
		t.Errorf("--output was not written: %v", err)
	}
}

// TestAllFailingSweepWritesEverything: a server answering 503 to
// everything gives levels whose requests all failed. The sweep records
// them with their error classes, writes JSON, CSV and PNG, and exits 1.
func TestAllFailingSweepWritesEverything(t *testing.T) {
	t.Parallel()
	inBubble(t, testAllFailingSweepWritesEverything)
}

func testAllFailingSweepWritesEverything(t *testing.T) {
	url := startSim(t, "", "")
	dir := t.TempDir()
	code, stdout, errOut := execute(t, "sweep", "--base-url", url, "--header", "X-Knee-Fault:error_503", "--rates", "2,4",
		"--step-duration", "1s", "--max-tokens", "4", "--label", "down", "--out-dir", dir, "--no-server-metrics")
	if code != ExitFailed {
		t.Errorf("exit %d, want 1\n%s\n%s", code, stdout, errOut)
	}
	for _, ext := range []string{".json", ".csv", ".png"} {
		if fi, err := os.Stat(filepath.Join(dir, "down"+ext)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", ext, err)
		}
	}
	s, err := results.ReadSweep(filepath.Join(dir, "down.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Levels) != 2 || s.Levels[0].Run == nil || s.Levels[0].Run.Requests.Errors["http_503:server_error"] == 0 {
		t.Errorf("levels %+v, want both with their 503s", s.Levels)
	}
}

// TestLabelIsAFileName checks that sweep and predict alike refuse a label
// that is a path, before anything runs: a label names files in --out-dir.
func TestLabelIsAFileName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"sweep", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--label", "x/y", "--out-dir", dir},
		{"predict", "--label", "x/y", "--out-dir", dir},
		{"predict", "--label", `x\y`, "--out-dir", dir},
	} {
		code, _, errOut := execute(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, "path separator") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused label left %v", entries)
	}
}
