package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestLoadFile: a load file sets the flags it names, the command line
// overrides it (a flag it excludes included), a key of another command is
// left out and said, a typo is refused with its near name, and
// --print-load writes a file that reads back to itself.
func TestLoadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeFile(t, dir, "load.yaml", `# a load
rate: 4
duration: 3s
header: ["X-Tenant: a", "X-Trace: 1"]
slo: ttft_sched.p95:300
mix:
  classes:
    - {name: chat, share: 0.7, input_tokens: 128, max_tokens: 16}
    - {name: batch, share: 0.3, input_tokens: 512, max_tokens: 64}
`)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err []string
		notInOut []string
	}{
		{"file", []string{"run", "-f", file, "--print-load"}, 0,
			[]string{"rate: 4", `duration: "3s"`, "- 'X-Tenant: a'", "name: chat"}, []string{"slo is a flag of"}, []string{"slo:"}},
		{"flag over file", []string{"run", "-f", file, "--rate", "9", "--print-load"}, 0, []string{"rate: 9"}, nil, []string{"rate: 4"}},
		{"excluded by a flag", []string{"run", "-f", file, "--concurrency", "2", "--print-load"}, 0,
			[]string{"concurrency: 2"}, nil, []string{"rate:"}},
		{"another command's", []string{"sweep", "-f", file, "--rates", "2,4", "--print-load"}, 0,
			[]string{"slo: ", "rates: "}, []string{"rate is a flag of"}, nil},
		{"typo", []string{"run", "-f", writeFile(t, dir, "typo.yaml", "rat: 4\n"), "--print-load"}, ExitUsage,
			nil, []string{"line 1: rat is no flag of knee run (did you mean rate?)"}, nil},
		{"wrong type", []string{"run", "-f", writeFile(t, dir, "type.yaml", "rate: fast\n"), "--print-load"}, ExitUsage,
			nil, []string{"line 1: rate:"}, nil},
		{"not a mapping", []string{"run", "-f", writeFile(t, dir, "list.yaml", "- rate\n"), "--print-load"}, ExitUsage,
			nil, []string{"a mapping of flag names"}, nil},
	} {
		code, out, errOut := execute(t, tc.args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s\n%s", tc.name, code, tc.code, out, errOut)
			continue
		}
		for _, w := range tc.out {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out)
			}
		}
		for _, w := range tc.notInOut {
			if strings.Contains(out, w) {
				t.Errorf("%s: output holds %q:\n%s", tc.name, w, out)
			}
		}
		for _, w := range tc.err {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, errOut)
			}
		}
	}
	_, printed, _ := execute(t, "run", "-f", file, "--print-load")
	again := writeFile(t, dir, "again.yaml", printed)
	if _, reprinted, _ := execute(t, "run", "-f", again, "--print-load"); reprinted != printed {
		t.Errorf("--print-load does not read back to itself:\n%s\n---\n%s", printed, reprinted)
	}
}

// TestLoadFileRuns: a run from a load file with its mix inline measures
// the mix's classes, as --mix FILE would.
func TestLoadFileRuns(t *testing.T) {
	t.Parallel()
	inBubble(t, func(t *testing.T) {
		dir := t.TempDir()
		file := writeFile(t, dir, "load.yaml", "rate: 4\nduration: 3s\nno-server-metrics: true\nmix:\n  classes:\n"+
			"    - {name: chat, share: 0.7, input_tokens: 128, max_tokens: 16}\n    - {name: batch, share: 0.3, input_tokens: 512, max_tokens: 64}\n")
		r := runJSON(t, "run", "--base-url", startSim(t, "", ""), "-f", file)
		if len(r.Classes) != 2 || r.Requests.OK == 0 || r.Config.DurationS != 3 {
			t.Errorf("classes %d, %d ok, window %g s", len(r.Classes), r.Requests.OK, r.Config.DurationS)
		}
	})
}

// TestStoppedRunKeepsAnOldFile: an interrupted run that measured nothing
// does not replace an existing result; one that measured, or a new file,
// is written.
func TestStoppedRunKeepsAnOldFile(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.json", `{"old": true}`)
	for _, tc := range []struct {
		name string
		path string
		res  *results.Run
		keep bool
	}{
		{"stopped, nothing measured, old file", old, &results.Run{Interrupted: true}, true},
		{"stopped, something measured", old, &results.Run{Interrupted: true, Requests: results.Requests{OK: 3}}, false},
		{"whole run", old, &results.Run{}, false},
		{"no old file", filepath.Join(dir, "new.json"), &results.Run{Interrupted: true}, false},
		{"standard output", "-", &results.Run{Interrupted: true}, false},
	} {
		if got := keepsOld(tc.path, tc.res); got != tc.keep {
			t.Errorf("%s: keeps %v, want %v", tc.name, got, tc.keep)
		}
	}
}

// TestGPUMetricsURLMustBeHTTP: an exporter is read over http(s): a
// file:// or schemeless --gpu-metrics-url is a usage error before anything
// runs.
func TestGPUMetricsURLMustBeHTTP(t *testing.T) {
	for _, v := range []string{"file:///etc/passwd", "node:9400/metrics", "/metrics"} {
		if code, _, errOut := execute(t, "run", "--gpu-metrics-url", v); code != ExitUsage || !strings.Contains(errOut, "not an http(s) URL") {
			t.Errorf("%s: exit %d, %s", v, code, errOut)
		}
	}
}

// FuzzLoadFile: any bytes given as a load file are read or refused in
// words, never a panic turned into an internal error, and what
// --print-load prints of them reads back to itself.
func FuzzLoadFile(f *testing.F) {
	f.Add([]byte("rate: 4\nduration: 3s\nheader: [\"X-T: a\"]\n"))
	f.Add([]byte("mix:\n  classes:\n    - {name: a, share: 1, input_tokens: 8, max_tokens: 4}\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("rate: .nan\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, "l.yaml")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := execute(t, "run", "-f", file, "--print-load")
		if strings.Contains(errOut, "internal error") {
			t.Fatalf("%q: %s", b, errOut)
		}
		if code != 0 {
			return
		}
		again := filepath.Join(dir, "again.yaml")
		if err := os.WriteFile(again, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		if code2, out2, errOut2 := execute(t, "run", "-f", again, "--print-load"); code2 != 0 || out2 != out {
			t.Fatalf("%q printed\n%s\nwhich reads back as exit %d\n%s%s", b, out, code2, out2, errOut2)
		}
	})
}
