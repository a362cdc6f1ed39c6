package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// exampleShows is what each example's run must show besides requests
// answered.
var exampleShows = map[string]func(*results.Run) bool{
	"reasoning.yml": func(r *results.Run) bool { return r.Reasoning != nil && r.Reasoning.ReasoningPerRequest.P50 > 0 },
	"vision.yml": func(r *results.Run) bool {
		return r.Images != nil && r.Images.TokensPerImage != nil && *r.Images.TokensPerImage == 256
	},
	"pooling.yml": func(r *results.Run) bool { return r.Throughput.InputsPerS > 0 },
	"lora.yml":    func(r *results.Run) bool { return len(r.Classes) == 2 },
	"load.yml": func(r *results.Run) bool {
		return len(r.Classes) == 2 && r.Config.Rate == 4 && r.Config.Seed == 7
	},
	"disaggregated.yml": func(r *results.Run) bool {
		return r.Phases != nil && r.Phases.Transfer.Count > 0
	},
}

// TestExamplesRun: every models and mix file of docs/examples runs the
// command its "# try:" line gives, against knee sim serving the file
// (in a bubble, a 3 s window): its requests are answered and it shows
// what the example is for.
func TestExamplesRun(t *testing.T) {
	files, _ := filepath.Glob("../docs/examples/*.yml")
	if len(files) < 5 {
		t.Fatalf("%d example files, want the reasoning, vision, pooling, LoRA and mix ones", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			inBubble(t, func(t *testing.T) { runExample(t, file) })
		})
	}
}

func runExample(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var try string
	for _, line := range strings.Split(string(b), "\n") {
		if cmd, ok := strings.CutPrefix(line, "# try: knee "); ok {
			try = cmd
		}
	}
	if try == "" {
		t.Fatal(`no "# try: knee …" line`)
	}
	var args []string
	fields := strings.Fields(strings.ReplaceAll(try, "docs/examples/", "../docs/examples/"))
	for i := 0; i < len(fields); i++ {
		switch fields[i] {
		case "--sim-models":
			args = append(args, "--base-url", startSim(t, fields[i+1], ""))
			i++
		case "--duration":
			args = append(args, "--duration", "3s")
			i++
		default:
			args = append(args, fields[i])
		}
	}
	if !slices.Contains(fields, "--sim-models") && !slices.Contains(fields, "--base-url") {
		// No target: knee starts its built-in simulator, whose process
		// a bubble cannot wait on; the same simulator is started here.
		args = append(args, "--base-url", startSim(t, "", ""))
	}
	dir := t.TempDir()
	if args[0] == "sweep" {
		code, out, errOut := execute(t, append(args, "--out-dir", dir, "--label", "x")...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, "x.json"))
		if err != nil || len(sw.Levels) == 0 || sw.Levels[0].Run == nil || sw.Levels[0].Run.Requests.OK == 0 {
			t.Fatalf("%v: %v, %+v", args, err, sw)
		}
		return
	}
	r := runJSON(t, args...)
	if r.Requests.OK == 0 || r.Requests.Failed > 0 {
		t.Errorf("%v: %d ok, %d failed %v", args, r.Requests.OK, r.Requests.Failed, r.Requests.ErrorMessages)
	}
	if show := exampleShows[filepath.Base(file)]; show == nil || !show(r) {
		t.Errorf("%v: the run does not show what the example is for", args)
	}
}

// TestGuideLLMConversationsSaidRight: a GuideLLM multi-turn file, which
// records no answers, replays with the server's answers as history, as
// its note says, and each turn asks for its own numbered output count.
func TestGuideLLMConversationsSaidRight(t *testing.T) {
	t.Parallel()
	inBubble(t, func(t *testing.T) {
		dir := t.TempDir()
		data := writeFile(t, dir, "g.jsonl", `{"prompt_0":"first question","prompt_1":"second question","output_tokens_count_0":11,"output_tokens_count_1":13}`+"\n")
		r := runJSON(t, "run", "--base-url", startSim(t, "", ""), "--workload", "conversations", "--dataset", data, "--rate", "1", "--calls", "2", "--no-server-metrics")
		notes := strings.Join(r.Notes, "\n")
		if !strings.Contains(notes, "the server's own answers as history (the file records none)") {
			t.Errorf("notes do not say the history is the server's:\n%s", notes)
		}
		if r.Tokens.Output.Max > 13 || r.Requests.OK == 0 {
			t.Errorf("%d ok, output up to %g tokens, want each turn at most its own 11 or 13", r.Requests.OK, r.Tokens.Output.Max)
		}
	})
}
