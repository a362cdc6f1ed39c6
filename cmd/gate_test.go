package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gateModels is a models file of one scheduler model on a GPU whose
// compute and memory bandwidth are divided by slowdown.
func gateModels(t *testing.T, dir, name string, slowdown float64) string {
	return writeFile(t, dir, name, fmt.Sprintf(`hardware:
  gpu: {hbm_gib: 80, memory_bandwidth_gbps: %g, peak_tflops: %g}
models:
  - name: gate-model
    context_length: 16384
    engine: scheduler
    hardware: gpu
    weights: {parameters_billions: 8, bytes_per_parameter: 2}
    kv_cache: {bytes_per_token: 131072, block_size: 16, gpu_memory_utilization: 0.9}
    scheduler: {max_num_batched_tokens: 8192, max_num_seqs: 256}
`, 3350/slowdown, 989/slowdown))
}

// TestGate: the gate passes a run against itself; fails a run of a
// simulator 20% slower, on latency by more than its interval; and
// refuses, with exit code 4 naming what differs, two files that measured
// different workloads. In virtual time, on three repeats.
func TestGate(t *testing.T) {
	dir := t.TempDir()
	predict := func(label, models string, extra ...string) string {
		args := append([]string{"predict", "--sim-models", models, "--model", "gate-model", "--rates", "2,4,8", "--step-duration", "30s",
			"--input-tokens", "1024", "--max-tokens", "128", "--repeat", "3", "--label", label, "--out-dir", dir}, extra...)
		if code, out, errOut := execute(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		return filepath.Join(dir, label+".json")
	}
	base := predict("base", gateModels(t, dir, "fast.yml", 1))
	slower := predict("slower", gateModels(t, dir, "slow.yml", 1.2))
	other := predict("other", gateModels(t, dir, "fast2.yml", 1), "--input-tokens", "512")
	rules := "ttft_sched.p95:+10%,itl.p50:+10%,throughput:-5%,slo_knee:-1 level,errors:+0.5pp"

	code, out, errOut := execute(t, "compare", "--gate", rules, base, base)
	if code != 0 || !strings.Contains(out, "gate passed") {
		t.Errorf("against itself: exit %d\n%s\n%s", code, out, errOut)
	}
	page := filepath.Join(dir, "gate.html")
	code, out, errOut = execute(t, "compare", "--gate", rules, base, slower, "-o", page)
	if code != ExitFailed || !strings.Contains(out, "gate FAILED") {
		t.Fatalf("against a simulator 20%% slower: exit %d, want %d\n%s\n%s", code, ExitFailed, out, errOut)
	}
	// The page carries the verdicts the terminal printed, above the
	// comparison.
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<h3>Gate</h3>") ||
		!strings.Contains(string(b), "gate FAILED") || strings.Count(string(b), "FAILS") < 3 {
		t.Errorf("the gate's page (%v) lacks its verdicts", err)
	}
	// ITL p50 moves by 20% with next to no noise and fails at every
	// level; TTFT p95 moves as much, but three 30-second repeats leave an
	// interval of a few ms: it fails where that is under the 10% past the
	// allowance, and is never said to hold outright. Throughput (the
	// offered rate, kept up with) holds.
	ttftFails := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, "itl.p50") && !strings.Contains(line, "FAILS"):
			t.Errorf("ITL rule holds on a slower server: %s", line)
		case strings.Contains(line, "ttft_sched.p95") && strings.Contains(line, "FAILS"):
			ttftFails++
		case strings.Contains(line, "ttft_sched.p95") && !strings.Contains(line, "inconclusive"):
			t.Errorf("TTFT rule holds outright on a slower server: %s", line)
		case strings.Contains(line, "throughput") && strings.Contains(line, "FAILS"):
			t.Errorf("throughput fails below saturation: %s", line)
		}
	}
	if ttftFails == 0 {
		t.Error("the TTFT rule failed at no level")
	}
	t.Logf("\n%s", out)
	code, out, errOut = execute(t, "compare", "--gate", rules, base, other)
	if code != ExitMismatch || !strings.Contains(errOut, `input_tokens "1024" against "512"`) {
		t.Errorf("different workloads: exit %d, want %d naming input_tokens\n%s\n%s", code, ExitMismatch, out, errOut)
	}
	if code, _, errOut = execute(t, "compare", "--gate", rules, "--gate-ignore", "input_tokens", base, other); code == ExitMismatch {
		t.Errorf("--gate-ignore input_tokens still refused: %s", errOut)
	}
}

// TestGateRulesRefused: a rule that says nothing sensible is a usage
// error before any file is read.
func TestGateRulesRefused(t *testing.T) {
	for _, c := range []struct{ rules, want string }{
		{"ttft_sched.p95:-10%", "gets worse going up"},
		{"throughput:+5%", "gets worse going down"},
		{"ttft_sched.p97:+10%", "NN one of 50, 90, 95, 99"},
		{"slo_knee:-10%", "a knee moves by levels"},
		{"throughput:-5pp", "percentage points are for errors"},
		{"throughput:-5ms", "ms is for a latency percentile"},
		{"ttft_sched.p95 +10%", "write it as FIGURE:±AMOUNT UNIT"},
		{"ttft_sched.p95:+NaN%", "write it as"},
		{",", "no gate rules"},
		{"", "names no rule"},
		{"  ", "names no rule"},
	} {
		code, _, errOut := execute(t, "compare", "--gate", c.rules, "/nonexistent/a.json", "/nonexistent/b.json")
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("--gate %q: exit %d, %q; want usage error %q", c.rules, code, errOut, c.want)
		}
	}
	if code, _, errOut := execute(t, "compare", "--gate", "throughput:-5%", "a.json", "b.json", "-o", "gate.png"); code != ExitUsage || !strings.Contains(errOut, "NAME.html") {
		t.Errorf("--gate with a PNG: exit %d, %s", code, errOut)
	}
	if code, _, errOut := execute(t, "compare", "--gate", "throughput:-5%", "/nonexistent/a.json"); code != ExitUsage || !strings.Contains(errOut, "two files") {
		t.Errorf("one file: exit %d, %q", code, errOut)
	}
}
