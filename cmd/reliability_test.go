package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/results"
)

// unchanged snapshots files and reports any that changed.
type unchanged map[string][]byte

func snapshot(t *testing.T, paths ...string) unchanged {
	t.Helper()
	u := unchanged{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		u[p] = b
	}
	return u
}

func (u unchanged) check(t *testing.T) {
	t.Helper()
	for p, was := range u {
		if now, err := os.ReadFile(p); err != nil || !bytes.Equal(now, was) {
			t.Errorf("%s changed (%v)", p, err)
		}
	}
}

// usageCase is a command that must fail at once with code and a message
// containing want, leaving every file it was given as it was.
type usageCase struct {
	name string
	args []string
	code int
	want string
}

func runUsageCases(t *testing.T, cases []usageCase, keep ...string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := snapshot(t, keep...)
			start := time.Now()
			code, _, errOut := execute(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, %q; want exit %d saying %q", code, errOut, tc.code, tc.want)
			}
			if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
				t.Errorf("a stack trace: %s", errOut)
			}
			// A bound, not a speed target: refusing must not hang. The race
			// detector's pass reads /dev/zero's 256 MiB several times slower.
			if d := time.Since(start); d > raceSlowdown*20*time.Second {
				t.Errorf("took %s to refuse", d)
			}
			files.check(t)
		})
	}
}

// TestOutputsNeverAliasInputs: outputs naming the same file as each other
// or as an input are refused before anything runs, and nothing changes.
func TestOutputsNeverAliasInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ds := writeLines(t, "prompts.jsonl", wordPrompts(3, 5, 1))
	shard := filepath.Join(dir, "s0.json")
	sweepJSON := filepath.Join(dir, "sw.json")
	link := filepath.Join(dir, "link.jsonl")
	for _, f := range []string{shard, sweepJSON} {
		os.WriteFile(f, []byte(`{"schema_version":1}`), 0o644)
	}
	os.Symlink(ds, link)
	runUsageCases(t, []usageCase{
		{"output is records", []string{"run", "-o", shard, "--records", shard}, ExitUsage, "name the same file"},
		{"records is the dataset", []string{"run", "--dataset", ds, "--records", ds}, ExitUsage, "is also --dataset"},
		{"records is the dataset through a link", []string{"run", "--dataset", ds, "--records", link}, ExitUsage, "is also --dataset"},
		{"output is the dataset", []string{"run", "--dataset", ds, "-o", ds}, ExitUsage, "is also --dataset"},
		{"records is the sweep's JSON", []string{"sweep", "--out-dir", dir, "--label", "sw", "--records", sweepJSON}, ExitUsage, "name the same file"},
		{"merge over an input shard", []string{"merge", shard, "-o", shard}, ExitUsage, "is also input 1"},
		{"report over its input", []string{"report", sweepJSON, "-o", sweepJSON}, ExitUsage, "is also input 1"},
		{"calibrate over its input", []string{"calibrate", sweepJSON, "--json", sweepJSON}, ExitUsage, "is also input 1"},
		{"output and records both standard output", []string{"run", "-o", "-", "--records", "/dev/stdout"}, ExitUsage, "name the same file"},
		{"output in a missing folder", []string{"run", "-o", filepath.Join(dir, "new", "sub", "x.json")}, ExitRuntime, "does not exist"},
		{"out-dir is standard output", []string{"sweep", "--out-dir", "-"}, ExitUsage, "is not one"},
		{"out-dir cannot be made", []string{"sweep", "--out-dir", "/proc/nope"}, ExitRuntime, "--out-dir"},
	}, ds, shard, sweepJSON)
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("a folder was created for a refused output")
	}
}

// TestDescriptorOutputs: -o /dev/stdout into a pipe gives the reader the
// result, and into a file opened for appending keeps its earlier lines,
// as --records /dev/stdout does.
func TestDescriptorOutputs(t *testing.T) {
	t.Parallel()
	quiet.Wire(t, func() { testDescriptorOutputs(t) })
}

func testDescriptorOutputs(t *testing.T) {
	bin := kneeBinary(t)
	url := startSim(t, "", "")
	out, err := exec.Command(bin, "run", "--base-url", url, "--requests", "2", "-o", "/dev/stdout", "--quiet").Output()
	if err != nil {
		t.Fatalf("into a pipe: %v", err)
	}
	var r results.Run
	if err := json.Unmarshal(out, &r); err != nil || r.Requests.OK != 2 {
		t.Fatalf("the pipe read %d bytes that are not the result: %v", len(out), err)
	}
	for _, flag := range []string{"-o", "--records"} {
		log := filepath.Join(t.TempDir(), "results.log")
		os.WriteFile(log, []byte("earlier line\n"), 0o644)
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "run", "--base-url", url, "--requests", "2", flag, "/dev/stdout", "--quiet")
		cmd.Stdout = f
		err = cmd.Run()
		f.Close()
		got, _ := os.ReadFile(log)
		if err != nil || !bytes.HasPrefix(got, []byte("earlier line\n")) || len(got) < 100 {
			t.Errorf("%s /dev/stdout >> file: %v; the file holds %q…", flag, err, got[:min(len(got), 80)])
		}
	}
}

// TestNonFiniteNumbers: NaN, infinities and overflowing instants are
// usage errors of every command that takes a number, before any work.
func TestNonFiniteNumbers(t *testing.T) {
	t.Parallel()
	var cases []usageCase
	for _, v := range []string{"NaN", "Inf", "-Inf"} {
		cases = append(cases,
			usageCase{"sweep --slo " + v, []string{"sweep", "--slo", v}, ExitUsage, "not a finite number"},
			usageCase{"sweep --max-error-rate " + v, []string{"sweep", "--max-error-rate", v}, ExitUsage, "not a finite number"},
			usageCase{"predict --slo " + v, []string{"predict", "--slo", v}, ExitUsage, "not a finite number"},
			usageCase{"run --rate " + v, []string{"run", "--rate", v}, ExitUsage, "not a finite number"},
			usageCase{"run --burstiness " + v, []string{"run", "--rate", "1", "--burstiness", v}, ExitUsage, "not a finite number"},
			usageCase{"run --trace-speedup " + v, []string{"run", "--trace-speedup", v}, ExitUsage, "not a finite number"},
			usageCase{"run --goodput ttft:" + v, []string{"run", "--goodput", "ttft:" + v}, ExitUsage, "--goodput"},
			usageCase{"sweep --rates 1," + v, []string{"sweep", "--rates", "1," + v}, ExitUsage, "--rates"},
		)
	}
	cases = append(cases,
		usageCase{"start-at past 2200", []string{"run", "--start-at", "1e20"}, ExitUsage, "between 2000 and 2200"},
		usageCase{"start-at in year 1", []string{"run", "--start-at", "0001-01-01T00:00:00Z"}, ExitUsage, "between 2000 and 2200"},
		usageCase{"burstiness near zero", []string{"run", "--rate", "2", "--burstiness", "1e-6"}, ExitUsage, "--burstiness must be between"},
		usageCase{"burstiness underflowing", []string{"run", "--rate", "2", "--burstiness", "1e-300"}, ExitUsage, "--burstiness must be between"},
		usageCase{"predict a level past memory", []string{"predict", "--rates", "1e6"}, ExitUsage, "shorten --duration to"},
		usageCase{"predict 10000 replicas", []string{"predict", "--replicas", "10000"}, ExitUsage, "replicas"},
		usageCase{"predict a million streams", []string{"predict", "--concurrency", "1000000"}, ExitUsage, "streams"},
		usageCase{"predict 10000 hours", []string{"predict", "--step-duration", "10000h"}, ExitUsage, "a run can mean"},
		usageCase{"predict ignores --timeout", []string{"predict", "--timeout", "5s"}, ExitUsage, "no meaning in virtual time"},
		usageCase{"predict empty rates", []string{"predict", "--rates", ""}, ExitUsage, "empty"},
		usageCase{"sim past port 65535", []string{"sim", "--port", "65530", "--replicas", "10"}, ExitUsage, "65535"},
	)
	runUsageCases(t, cases)
}

// TestBoundedInputs: a folder, a forged shard or a malformed tokenizer
// as a file input ends in a message, not in memory exhausted
// (TestEveryInputIsBounded gives every input /dev/zero and a FIFO).
func TestBoundedInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	forged := filepath.Join(dir, "forged.json")
	os.WriteFile(forged, []byte(`{"schema_version":1,"shard":{"index":0,"count":1000000000},"window_s":1,"started_at":"2026-01-01T00:00:00Z","window_started_at":"2026-01-01T00:00:00Z"}`), 0o644)
	out := filepath.Join(dir, "m.json")
	runUsageCases(t, []usageCase{
		{"merge a folder", []string{"merge", dir, "-o", out}, ExitRuntime, "is a folder"},
		{"dataset a folder", []string{"run", "--dataset", dir}, ExitRuntime, "is a folder"},
		{"merge a forged shard count", []string{"merge", forged, "-o", out}, ExitUsage, "only 1 are given"},
		{"malformed tokenizer", []string{"run", "--dataset", writeLines(t, "e.jsonl", wordPrompts(1, 3, 1)), "--tokenizer", writeLines(t, "tok.json", []any{map[string]any{"model": map[string]any{"type": 5}}})}, ExitUsage, "type"},
	})
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused merge wrote its output")
	}
}

// TestTLSBlackHole: an https target that accepts connections and never
// finishes a handshake fails within --timeout, and one SIGINT stops a
// wait on it at once.
func TestTLSBlackHole(t *testing.T) {
	t.Parallel()
	quiet.Wire(t, func() { testTLSBlackHole(t) })
}

func testTLSBlackHole(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	url := fmt.Sprintf("https://%s/v1", l.Addr())
	start := time.Now()
	code, _, errOut := execute(t, "run", "--base-url", url, "--timeout", "1s", "--requests", "1")
	if code != ExitRuntime || !strings.Contains(errOut, "TLS handshake") || time.Since(start) > 5*time.Second {
		t.Errorf("exit %d after %s: %q", code, time.Since(start), errOut)
	}
	// With a long timeout, the first signal (the context's end) stops it.
	ctx, cancel := context.WithCancel(context.Background())
	var out, errBuf bytes.Buffer
	time.AfterFunc(300*time.Millisecond, cancel)
	start = time.Now()
	code = Execute(ctx, []string{"run", "--base-url", url, "--timeout", "60s", "--requests", "1"}, &out, &errBuf)
	if took := time.Since(start); took > 3*time.Second || code == ExitOK {
		t.Errorf("after a signal: exit %d in %s: %q", code, took, errBuf.String())
	}
	if testing.Short() {
		return
	}
	bin := kneeBinary(t)
	p := exec.Command(bin, "run", "--base-url", url, "--timeout", "60s", "--requests", "1")
	var stderr bytes.Buffer
	p.Stderr = &stderr
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	start = time.Now()
	p.Process.Signal(syscall.SIGINT)
	p.Wait()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("one SIGINT took %s to end the wait: %s", took, stderr.String())
	}
}

// TestFIFOWaitsEndAtASignal: a FIFO with no writer as an input, or with no
// reader as --records, holds knee only until the first signal.
func TestFIFOWaitsEndAtASignal(t *testing.T) {
	t.Parallel()
	quiet.Wire(t, func() { testFIFOWaitsEndAtASignal(t) })
}

func testFIFOWaitsEndAtASignal(t *testing.T) {
	dir := t.TempDir()
	// One FIFO each: an abandoned open still waits on its own.
	fifo := func(name string) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		return p
	}
	url := startSim(t, "", "")
	for _, args := range [][]string{{"merge", fifo("a"), "-o", filepath.Join(dir, "m.json")}, {"report", fifo("b"), "-o", filepath.Join(dir, "r.html")},
		{"run", "--base-url", url, "--requests", "1", "--records", fifo("c")}} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		start := time.Now()
		var out, errOut bytes.Buffer
		code := Execute(ctx, args, &out, &errOut)
		if took := time.Since(start); code != ExitInterrupted || took > 3*time.Second {
			t.Errorf("%v: exit %d after %s: %q", args[:1], code, took, errOut.String())
		}
	}
}
