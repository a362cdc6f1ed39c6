package bench

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/hftokenizer"
)

// realTokenizer reads one of hftokenizer's real tokenizer.json fixtures.
func realTokenizer(t *testing.T, name string) *hftokenizer.Tokenizer {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "workload", "hftokenizer", "testdata", name+".tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := hftokenizer.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// tokenServer counts a prompt as a real server does: its model's
// tokenizer over the text, plus what the chat template adds; it answers
// without usage when noUsage.
type tokenServer struct {
	tok      workload.TokenCounter
	template int
	noUsage  bool
	probes   *int
}

func (s tokenServer) Probe(r *workload.Request, rec *record.Record) {
	if s.probes != nil {
		*s.probes++
	}
	if s.noUsage {
		return
	}
	rec.PromptTokens, rec.UsageReported = s.tok.Count(r.Text())+s.template, true
}

// TestExactPromptsLandOnTheAskedLength: with the served model's tokenizer,
// every request's prompt, template included, is exactly the length asked
// (its draw, with a spread), at 64, 512 and 2,048 tokens, with or without
// a shared prefix; two probes find the template's tokens.
func TestExactPromptsLandOnTheAskedLength(t *testing.T) {
	tok := realTokenizer(t, "llama3_1")
	cases := []struct {
		name string
		syn  workload.Synthetic
	}{
		{"64", workload.Synthetic{Tokens: 64}},
		{"512", workload.Synthetic{Tokens: 512}},
		{"2048", workload.Synthetic{Tokens: 2048}},
		{"spread", workload.Synthetic{Tokens: 512, Spread: workload.Spread{RangeRatio: 0.5}}},
		{"prefix", workload.Synthetic{Tokens: 64, Prefix: workload.Pool{Tokens: 1000, Count: 3}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probes := 0
			server := tokenServer{tok: tok, template: 31, probes: &probes}
			syn := c.syn
			syn.Seed, syn.Nonce, syn.MaxTokens = 3, "[level 0]", 8
			fit, note, ok := ExactPrompts(server, tok, syn, true)
			if !ok {
				t.Fatalf("not exact: %s", note)
			}
			if fit.Overhead != 31 || probes != 2 || !strings.Contains(note, "exact") {
				t.Errorf("overhead %d after %d probes, want 31 after 2; note %q", fit.Overhead, probes, note)
			}
			for i := range 50 {
				in, _ := fit.Lengths(i)
				req := fit.Request(i)
				var rec record.Record
				server.Probe(&req, &rec)
				if want := in + syn.Prefix.Tokens; rec.PromptTokens != want {
					t.Fatalf("request %d: the server counts %d, want %d", i, rec.PromptTokens, want)
				}
			}
		})
	}
}

// TestExactPromptsRefuseWhatTheyCannotKnow: another model's tokenizer, a
// server without usage and a probe that must not be sent each leave the
// sizing to the server (or send nothing), saying why.
func TestExactPromptsRefuseWhatTheyCannotKnow(t *testing.T) {
	llama3, llama2 := realTokenizer(t, "llama3_1"), realTokenizer(t, "llama2")
	syn := workload.Synthetic{Tokens: 512, MaxTokens: 8, Seed: 1}
	if _, note, ok := ExactPrompts(tokenServer{tok: llama2, template: 5}, llama3, syn, true); ok || !strings.Contains(note, "served model's") {
		t.Errorf("another model's tokenizer: ok %v, note %q", ok, note)
	}
	if _, note, ok := ExactPrompts(tokenServer{noUsage: true}, llama3, syn, true); ok || !strings.Contains(note, "no usage") {
		t.Errorf("no usage: ok %v, note %q", ok, note)
	}
	probes := 0
	fit, note, ok := ExactPrompts(tokenServer{tok: llama3, probes: &probes}, llama3, syn, false)
	if !ok || probes != 0 || fit.Overhead != 0 || !strings.Contains(note, "not calibrated") {
		t.Errorf("--no-calibrate: ok %v after %d probes, overhead %d, note %q", ok, probes, fit.Overhead, note)
	}
	if got := llama3.Count(fit.Request(0).Text()); got != 512 {
		t.Errorf("--no-calibrate: the text holds %d tokens, want 512", got)
	}
}
