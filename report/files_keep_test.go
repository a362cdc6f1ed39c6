package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestSweepStoppedBeforeMeasuringKeepsTheOldFiles (issue 56): a sweep
// stopped before any level measured a request does not replace the last
// sweep of its label; one that measured a request does.
func TestSweepStoppedBeforeMeasuringKeepsTheOldFiles(t *testing.T) {
	dir := t.TempDir()
	f := SweepFiles{JSON: filepath.Join(dir, "s.json"), CSV: filepath.Join(dir, "s.csv")}
	old := []byte(`{"old": true}`)
	os.WriteFile(f.JSON, old, 0o644)
	empty := &results.Sweep{Interrupted: true, Levels: []results.Level{{Load: 2, Run: &results.Run{Interrupted: true}}}}
	written, warn, err := f.Write(empty)
	if err != nil || len(written) != 0 || warn == "" {
		t.Fatalf("wrote %v, warning %q, error %v", written, warn, err)
	}
	if b, _ := os.ReadFile(f.JSON); string(b) != string(old) {
		t.Errorf("the old result was replaced: %s", b)
	}
	if err := f.WriteData(empty); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f.JSON); string(b) != string(old) {
		t.Errorf("the per-level write replaced the old result: %s", b)
	}
	measured := &results.Sweep{Interrupted: true, Levels: []results.Level{{Load: 2, Run: &results.Run{Interrupted: true}}}}
	measured.Levels[0].Run.Requests.OK = 3
	if written, _, err := f.Write(measured); err != nil || len(written) == 0 {
		t.Fatalf("a sweep that measured something: wrote %v, %v", written, err)
	}
	if b, _ := os.ReadFile(f.JSON); string(b) == string(old) {
		t.Error("a sweep that measured something did not replace the old result")
	}
}
