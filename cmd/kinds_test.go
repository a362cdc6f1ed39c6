package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload/kind"
)

// TestEveryKindOnEverySide: each kind of the table is sent by the client
// to knee sim (in a bubble) and predicted in virtual time on the same
// model, and the two count the same requests, prompt tokens and output
// tokens, request for request. A generating kind runs on an H100's
// llama-3.1-8b, a pooling one on it made an encoder.
func TestEveryKindOnEverySide(t *testing.T) {
	t.Parallel()
	for _, k := range kind.All() {
		models := "models:\n  - name: m\n    preset: h100-80gb/llama-3.1-8b\n"
		flags := []string{"--endpoint", string(k.Name), "--model", "m", "--requests", "12", "--input-tokens", "200", "--seed", "3", "--ignore-eos"}
		switch {
		case k.Input == kind.Pairs:
			models += "    pooling: {dimension: 16}\n"
			flags = append(flags, "--documents", "3")
		case k.Pooled():
			models += "    pooling: {dimension: 16}\n"
			flags = append(flags, "--batch-size", "2")
		default:
			flags = append(flags, "--max-tokens", "24")
		}
		dir := t.TempDir()
		file := writeFile(t, dir, "m.yml", models)
		var live *results.Run
		inBubble(t, func(t *testing.T) {
			url := startSim(t, file, "")
			live = runJSON(t, append([]string{"run", "--base-url", url, "--no-server-metrics", "--rate", "4"}, flags...)...)
		})
		if code, out, errOut := execute(t, append([]string{"predict", "--sim-models", file, "--out-dir", dir, "--label", "p", "--rates", "4"}, flags...)...); code != 0 {
			t.Fatalf("%s: predict: exit %d\n%s\n%s", k.Name, code, out, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, "p.json"))
		if err != nil {
			t.Fatal(err)
		}
		pred := sw.Levels[0].Run
		t.Logf("%-11s live %d ok, %d in, %d out; predicted %d ok, %d in, %d out", k.Name, live.Requests.OK, live.Tokens.InputTotal, live.Tokens.OutputTotal,
			pred.Requests.OK, pred.Tokens.InputTotal, pred.Tokens.OutputTotal)
		if live.Requests.OK != 12 || live.Tokens.InputTotal == 0 || live.Requests.OK != pred.Requests.OK ||
			live.Tokens.InputTotal != pred.Tokens.InputTotal || live.Tokens.OutputTotal != pred.Tokens.OutputTotal {
			t.Errorf("%s: live %d ok (%v), %d in, %d out tokens; predicted %d ok, %d in, %d out", k.Name, live.Requests.OK, live.Requests.Errors,
				live.Tokens.InputTotal, live.Tokens.OutputTotal, pred.Requests.OK, pred.Tokens.InputTotal, pred.Tokens.OutputTotal)
		}
		for _, w := range live.Warnings {
			if strings.Contains(w, "ignore_eos") {
				// knee sim honours it on every generating kind, and a
				// pooling kind has no budget to fill.
				t.Errorf("%s: %s", k.Name, w)
			}
		}
		if k.Pooled() != (live.Tokens.OutputTotal == 0) {
			t.Errorf("%s: %d output tokens; a pooling kind generates none, any other some", k.Name, live.Tokens.OutputTotal)
		}
	}
}

// TestDocsListEveryKind: the guide's list of --endpoint values is the
// table's, in its order, so a new kind cannot ship undocumented.
func TestDocsListEveryKind(t *testing.T) {
	b, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range kind.Names() {
		names = append(names, string(n))
	}
	want := "`--endpoint " + strings.Join(names, "|") + "`"
	if !strings.Contains(string(b), want) {
		t.Errorf("docs/cli.md does not list the kinds as %s", want)
	}
}

// TestEveryKindInTheEndpointsTable: docs/endpoints.md's table has a row
// for each kind of the table, and no row for a kind knee does not have.
func TestEveryKindInTheEndpointsTable(t *testing.T) {
	b, err := os.ReadFile("../docs/endpoints.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(l, "| `"); ok {
			name, _, _ = strings.Cut(name, "`")
			rows[name] = true
		}
	}
	for _, k := range kind.All() {
		if !rows[string(k.Name)] {
			t.Errorf("docs/endpoints.md: no row for --endpoint %s", k.Name)
		}
		delete(rows, string(k.Name))
	}
	for name := range rows {
		if name != "--endpoint" {
			t.Errorf("docs/endpoints.md: a row for %q, which is no kind", name)
		}
	}
}
