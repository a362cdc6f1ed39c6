package cmd

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// readCSV reads a CSV file's rows as maps by header.
func readCSV(t *testing.T, text string) []map[string]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("not a CSV (%v): %q", err, text)
	}
	if !slices.Equal(rows[0], results.SlicesCSVHeader) {
		t.Fatalf("header %v, want %v", rows[0], results.SlicesCSVHeader)
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// TestSweepSlicesCSV: a live sweep writes label-slices.csv beside its
// CSV, one row per slice of every level, whose sent counts add up to the
// level's and whose server columns carry knee sim's gauges.
func TestSweepSlicesCSV(t *testing.T) {
	t.Parallel()
	inBubble(t, testSweepSlicesCSV)
}

func testSweepSlicesCSV(t *testing.T) {
	url := startSim(t, "", "")
	dir := t.TempDir()
	code, out, errOut := execute(t, "sweep", "--base-url", url, "--rates", "4,8", "--step-duration", "3s", "--slice", "1s",
		"--input-tokens", "256", "--max-tokens", "16", "--label", "cut", "--out-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	path := filepath.Join(dir, "cut-slices.csv")
	if !strings.Contains(out, path) {
		t.Errorf("the sweep does not say it wrote %s:\n%s", path, out)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := results.ReadSweep(filepath.Join(dir, "cut.json"))
	if err != nil {
		t.Fatal(err)
	}
	sent, gauges := map[string]int64{}, 0
	for _, row := range readCSV(t, string(raw)) {
		n, _ := strconv.ParseInt(row["sent"], 10, 64)
		sent[row["load"]] += n
		if row["server_running"] != "" && row["server_waiting"] != "" {
			gauges++
		}
	}
	for _, l := range s.Levels {
		load := strconv.FormatFloat(l.Load, 'f', -1, 64)
		if l.Run == nil || sent[load] != l.Run.Requests.Sent {
			t.Errorf("level %s: the slices sent %d, the level %+v", load, sent[load], l.Run)
		}
	}
	if gauges == 0 {
		t.Errorf("no slice carries knee sim's gauges:\n%s", raw)
	}
}

// TestRunSlicesCSV: knee run --slices-csv - writes the CSV alone to
// standard output; --slice 0 refuses it before anything is sent.
func TestRunSlicesCSV(t *testing.T) {
	t.Parallel()
	inBubble(t, testRunSlicesCSV)
}

func testRunSlicesCSV(t *testing.T) {
	url := startSim(t, "", "")
	code, out, errOut := execute(t, "run", "--base-url", url, "--rate", "10", "--duration", "3s", "--slice", "1s",
		"--input-tokens", "64", "--max-tokens", "8", "--slices-csv", "-")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	rows := readCSV(t, out)
	if len(rows) < 3 || rows[0]["load"] != "" || rows[0]["start_s"] != "0" || rows[0]["end_s"] != "1" {
		t.Errorf("want one-second slices with no load named, from 0:\n%s", out)
	}
	judged := 0
	for _, r := range rows {
		// A second of the window holds about 200 wake-ups, judged how the
		// machine allows; one a starved host took half of goes unjudged.
		switch v := r["client_verdict"]; v {
		case "healthy", "noisy", "client-limited", "host-starved":
			judged++
		case "":
		default:
			t.Errorf("slice from %s s: client verdict %q", r["start_s"], v)
		}
	}
	code, _, errOut = execute(t, "run", "--base-url", url, "--rate", "10", "--duration", "2s", "--slice", "0", "--slices-csv", "-")
	if code != ExitUsage || !strings.Contains(errOut, "--slice 0") {
		t.Errorf("--slices-csv with --slice 0: exit %d, %s", code, errOut)
	}
	if judged == 0 {
		t.Skip("no slice judged: the host starved the client's timers below 100 wake-ups in every second")
	}
}
