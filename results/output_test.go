package results

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteOutputKeepsSymlinks: a symlink stays a symlink; its target is
// replaced, with mode 0644 when it is new.
func TestWriteOutputKeepsSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutput(link, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutput(link, []byte("two")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	b, _ := os.ReadFile(target)
	if string(b) != "two" {
		t.Errorf("target holds %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	// An existing file keeps its mode.
	other := filepath.Join(dir, "private.json")
	os.WriteFile(other, nil, 0o600)
	_ = WriteOutput(other, []byte("x"))
	if fi, _ := os.Stat(other); fi.Mode().Perm() != 0o600 {
		t.Errorf("an existing file's mode became %v", fi.Mode().Perm())
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestWriteOutputToFIFO: a FIFO is written in place, so its reader gets
// the data and the FIFO stays a FIFO.
func TestWriteOutputToFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	if err := CheckOutput(fifo); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutput(fifo, []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, []byte(`{"ok":true}`)) {
		t.Errorf("the reader got %q", b)
	}
	if fi, _ := os.Lstat(fifo); fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO became %v", fi.Mode())
	}
}

// TestCheckOutput refuses what would lose a measured run: a folder, or a
// path under a file.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		path, want string
	}{
		{dir, "is a folder"},
		{filepath.Join(file, "x.json"), "not a folder"},
		{"", "empty"},
	} {
		if err := CheckOutput(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckOutput(%q) = %v, want %q", tc.path, err, tc.want)
		}
	}
	for _, ok := range []string{Stdout, file, filepath.Join(dir, "r.json"), "/dev/stdout", "/dev/stderr", "/proc/self/fd/1", "/dev/null"} {
		if err := CheckOutput(ok); err != nil {
			t.Errorf("CheckOutput(%q) = %v", ok, err)
		}
	}
	// A new file in a folder that does not exist is refused; under
	// --out-dir the folder is made.
	deep := filepath.Join(dir, "new", "deeper", "r.json")
	if err := CheckOutput(deep); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("CheckOutput(%q) = %v, want the missing folder named", deep, err)
	}
	if err := CheckOutputIn(deep); err != nil {
		t.Errorf("CheckOutputIn(%q) = %v", deep, err)
	}
	if err := CheckOutput("/proc/self/fd/987"); err == nil || !strings.Contains(err.Error(), "not open") {
		t.Errorf("a closed descriptor: %v", err)
	}
}

// TestDescriptorAliasesAppend: /dev/stdout, /dev/fd/N and /proc/self/fd/N
// are written through the descriptor, so a file the shell opened for
// appending keeps what it held, and a pipe gets the data.
func TestDescriptorAliasesAppend(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "results.log")
	os.WriteFile(log, []byte("earlier line\n"), 0o644)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	alias := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	if !SamePlace(alias, log) || SamePlace(alias, filepath.Join(dir, "other")) {
		t.Error("an alias is not the file it names")
	}
	if err := WriteOutput(alias, []byte("first\n")); err != nil {
		t.Fatal(err)
	}
	w, err := OpenStream(fmt.Sprintf("/dev/fd/%d", f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(w, "second\n")
	w.Close()
	if got, _ := os.ReadFile(log); string(got) != "earlier line\nfirst\nsecond\n" {
		t.Errorf("the file holds %q", got)
	}
	// Still open: closing the stream did not close the descriptor.
	if _, err := f.Write([]byte("x")); err != nil {
		t.Errorf("the descriptor was closed: %v", err)
	}
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		WriteOutput(fmt.Sprintf("/proc/self/fd/%d", pw.Fd()), []byte("through the pipe"))
		pw.Close()
	}()
	if got, _ := io.ReadAll(r); string(got) != "through the pipe" {
		t.Errorf("the pipe read %q", got)
	}
	if Replaceable("/dev/stdout") || Replaceable("-") || !Replaceable(log) || !Replaceable(filepath.Join(dir, "new.json")) {
		t.Error("Replaceable misjudged")
	}
}

// TestAllFailedSweepMarshals: a level where every request failed has no
// latency; the knees say so with null, never NaN, so the file is written.
func TestAllFailedSweepMarshals(t *testing.T) {
	s := &Sweep{SchemaVersion: SchemaVersion, Axis: "rate", SLO: SLO{Bounds: []Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}}
	for _, load := range []float64{1, 2, 4} {
		r := &Run{Health: Health{Verdict: VerdictHealthy}}
		r.Requests = Requests{Sent: 10, Failed: 10, Errors: map[string]int64{"http_503:server_error": 10}}
		r.Arrivals.OfferedRate = load
		s.Levels = append(s.Levels, Level{Load: load, Run: r})
	}
	s.FindKnees()
	path := filepath.Join(t.TempDir(), "s.json")
	if err := WriteJSON(path, s); err != nil {
		t.Fatalf("an all-failing sweep does not write: %v", err)
	}
	back, err := ReadSweep(path)
	if err != nil {
		t.Fatal(err)
	}
	if k := back.Knees.Saturation; k == nil || k.LatencyMs != nil {
		t.Errorf("saturation %+v, want at the first level with no latency", k)
	}
	if _, err := s.CSV(); err != nil {
		t.Error(err)
	}
}
