package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/results"
)

var (
	buildOnce sync.Once
	kneeBin   string
	buildErr  error
)

// kneeBinary builds knee once for the tests that run it as a process.
func kneeBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "knee-bin-")
		if err != nil {
			buildErr = err
			return
		}
		kneeBin = filepath.Join(dir, "knee")
		out, err := exec.Command("go", "build", "-o", kneeBin, "github.com/kneebench/knee/cmd/knee").CombinedOutput()
		if err != nil {
			buildErr = err
			kneeBin = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building knee: %v\n%s", buildErr, kneeBin)
	}
	return kneeBin
}

// simChildren lists running `knee sim` processes started from bin.
func simChildren(bin string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 1 && args[0] == bin && args[1] == "sim" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestDefaultTarget runs knee run with no base URL: the built-in simulator
// starts as a child, is measured, and is gone afterwards.
func TestDefaultTarget(t *testing.T) {
	quiet.Wire(t, func() { testDefaultTarget(t) })
}

func testDefaultTarget(t *testing.T) {
	bin := kneeBinary(t)
	cmd := exec.Command(bin, "run", "--concurrency", "2", "--requests", "10", "--max-tokens", "8")
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "built-in simulator") || !strings.Contains(out.String(), "10 ok") ||
		!strings.Contains(out.String(), "knee sim /metrics/summary") {
		t.Errorf("output does not show the built-in simulator measured:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "knee sim serving") {
		t.Errorf("the child simulator did not report serving:\n%s", errOut.String())
	}
	time.Sleep(100 * time.Millisecond)
	if pids := simChildren(bin); len(pids) > 0 {
		t.Errorf("simulator processes left behind: %v", pids)
	}
}

// TestInterruptedSweepKeepsLevels sends SIGINT to a sweep in its third
// level: the JSON and CSV hold the levels measured, and no simulator child
// is left behind.
func TestInterruptedSweepKeepsLevels(t *testing.T) {
	quiet.Wire(t, func() { testInterruptedSweepKeepsLevels(t) })
}

func testInterruptedSweepKeepsLevels(t *testing.T) {
	bin := kneeBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "sweep", "--rates", "1,2,3,4,5", "--step-duration", "2s", "--input-tokens", "64",
		"--max-tokens", "8", "--label", "cut", "--out-dir", dir)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL=")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for two level rows, then interrupt.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if s, err := results.ReadSweep(filepath.Join(dir, "cut.json")); err == nil && len(s.Levels) >= 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != ExitInterrupted {
			t.Errorf("exit %d after SIGINT, want %d", code, ExitInterrupted)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the sweep did not stop after SIGINT:\n%s", out.String())
	}
	s, err := results.ReadSweep(filepath.Join(dir, "cut.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(s.Levels) < 2 || len(s.Levels) >= 5 {
		t.Errorf("%d levels in the JSON, want the 2–4 measured before the signal", len(s.Levels))
	}
	csvBytes, _ := os.ReadFile(filepath.Join(dir, "cut.csv"))
	if rows := strings.Count(strings.TrimSpace(string(csvBytes)), "\n"); rows != len(s.Levels) {
		t.Errorf("CSV has %d rows, JSON %d levels", rows, len(s.Levels))
	}
	if !strings.Contains(out.String(), "interrupted") {
		t.Errorf("the output does not say the sweep was interrupted:\n%s", out.String())
	}
	time.Sleep(100 * time.Millisecond)
	if pids := simChildren(bin); len(pids) > 0 {
		t.Errorf("simulator processes left behind: %v", pids)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// TestTwoSignalsStillWrite: GNU timeout and supervisors signal the process
// and then its group, a millisecond apart. The run still writes what it
// measured, and exits 130.
func TestTwoSignalsStillWrite(t *testing.T) {
	quiet.Wire(t, func() { testTwoSignalsStillWrite(t) })
}

func testTwoSignalsStillWrite(t *testing.T) {
	bin := kneeBinary(t)
	for try := 0; try < 2; try++ {
		out := filepath.Join(t.TempDir(), "run.json")
		cmd := exec.Command(bin, "run", "--concurrency", "2", "--duration", "60s", "--max-tokens", "32", "--output", out)
		cmd.Env = append(os.Environ(), "OPENAI_BASE_URL=")
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && !strings.Contains(stderr.String(), "knee sim serving") {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(1500 * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		time.Sleep(time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("no exit after two signals:\n%s", stderr.String())
		}
		if code := exitCode(err); code != ExitInterrupted {
			t.Errorf("try %d: exit %d, want %d\n%s", try, code, ExitInterrupted, stderr.String())
		}
		r, rerr := results.ReadRun(out)
		if rerr != nil {
			t.Fatalf("try %d: nothing written: %v\n%s\n%s", try, rerr, stdout.String(), stderr.String())
		}
		if !r.Interrupted || r.Requests.OK == 0 {
			t.Errorf("try %d: interrupted %v, %d ok: want the partial run", try, r.Interrupted, r.Requests.OK)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if pids := simChildren(bin); len(pids) > 0 {
		t.Errorf("simulator processes left behind: %v", pids)
	}
}

// syncBuffer is a bytes.Buffer a test may read while a child process's
// output is still being copied into it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHangUpStopsARun: SIGHUP (a terminal closed) ends a run as SIGTERM
// does: exit 130, what was measured written and marked interrupted.
func TestHangUpStopsARun(t *testing.T) {
	quiet.Wire(t, func() { testHangUpStopsARun(t) })
}

func testHangUpStopsARun(t *testing.T) {
	bin := kneeBinary(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(bin, "run", "--rate", "4", "--duration", "60s", "--input-tokens", "64", "--max-tokens", "8", "-o", out)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL=")
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(buf.String(), "sent") {
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGHUP)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != ExitInterrupted {
			t.Errorf("exit %d after SIGHUP, want %d\n%s", code, ExitInterrupted, buf.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the run did not stop after SIGHUP:\n%s", buf.String())
	}
	r, err := results.ReadRun(out)
	if err != nil || !r.Interrupted {
		t.Errorf("%v, interrupted %v\n%s", err, r != nil && r.Interrupted, buf.String())
	}
}
