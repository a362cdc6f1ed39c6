package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// TestDefaultNamesDoNotReplaceEachOther: a default name is the time to
// the second, and a loop of predictions makes several a second; the
// second of a second gets -2, the third -3, while a --label the user
// gives is used as given.
func TestDefaultNamesDoNotReplaceEachOther(t *testing.T) {
	dir := t.TempDir()
	var labels []string
	for range 3 {
		label, f, err := NewSweepFiles(dir, "", "predict")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.JSON, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		labels = append(labels, label)
	}
	if labels[0] == labels[1] || labels[1] == labels[2] || labels[0] == labels[2] {
		// Across a second's edge the names differ anyway; within one they
		// must differ by their suffix.
		t.Errorf("three default names in a row: %v", labels)
	}
	os.WriteFile(filepath.Join(dir, "mine.png"), nil, 0o644)
	if label, _, _ := NewSweepFiles(dir, "mine", "predict"); label != "mine" {
		t.Errorf("a given label came back as %q", label)
	}
	if got := freeLabel(dir, "mine"); got != "mine-2" {
		t.Errorf("a default name whose PNG alone is there: %q, want mine-2", got)
	}
}

// TestClassifySaysWhyAFileOfAKindFails: a sweep file with one field of the
// wrong type is refused with the sweep's own error, where it once passed
// as a run holding nothing and made a page of it.
func TestClassifySaysWhyAFileOfAKindFails(t *testing.T) {
	whole, err := json.Marshal(&results.Sweep{SchemaVersion: results.SchemaVersion, Label: "s",
		Levels: []results.Level{{Load: 1, Run: &results.Run{SchemaVersion: results.SchemaVersion}}}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(whole, &m); err != nil {
		t.Fatal(err)
	}
	m["levels"].([]any)[0].(map[string]any)["run"].(map[string]any)["throughput"] = 1e308
	sweep, _ := json.Marshal(m)
	in, err := Classify([]string{"s.json"}, [][]byte{sweep})
	if err == nil || !strings.Contains(err.Error(), "s.json") || !strings.Contains(err.Error(), "throughput") {
		t.Errorf("a sweep with a bad field: %v (runs %d, sweeps %d)", err, len(in.Runs), len(in.Sweeps))
	}
	plan := []byte(`{"schema_version": ` + strconv.Itoa(results.SchemaVersion) + `, "kind": "plan", "rows": 5}`)
	if _, err := Classify([]string{"p.json"}, [][]byte{plan}); err == nil || !strings.Contains(err.Error(), "rows") {
		t.Errorf("a plan with a bad field: %v", err)
	}
}
