package model

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/simulator/sched"
)

// TestVocabSize: a models file's vocab_size reaches the cost model (a
// prompt step computes faster, a decode step of an untied model reads
// less), and a vocabulary no model of that size has is refused, naming
// the section.
func TestVocabSize(t *testing.T) {
	costs := func(arch string) sched.Costs {
		t.Helper()
		file := strings.Replace(gemmModel, "{tiles}", "", 1)
		file = strings.Replace(file, "{hidden_size: 4096, attention_heads: 32}", arch, 1)
		f, err := ParseModels("m.yml", []byte(file))
		if err != nil {
			t.Fatal(err)
		}
		return f.SchedConfig(&f.Models[0]).Costs
	}
	plain := costs("{hidden_size: 4096, attention_heads: 32}")
	untied := costs("{hidden_size: 4096, attention_heads: 32, vocab_size: 128256}")
	tied := costs("{hidden_size: 4096, attention_heads: 32, vocab_size: 128256, tied_embeddings: true}")
	prompt, decode := sched.Load{Tokens: 4096, Seqs: 1}, sched.Load{Tokens: 64, Seqs: 64}
	if plain.Vocabulary() || !untied.Vocabulary() || !tied.Vocabulary() {
		t.Fatalf("vocabulary term: plain %v, untied %v, tied %v", plain.Vocabulary(), untied.Vocabulary(), tied.Vocabulary())
	}
	if p, u := plain.StepTime(prompt).Compute, untied.StepTime(prompt).Compute; !(u < 0.88*p) {
		t.Errorf("a 4,096-token prompt step computes %.4g s untied, %.4g s without a vocabulary: want the table and head left out", u, p)
	}
	if p, u, d := plain.StepTime(decode).Memory, untied.StepTime(decode).Memory, tied.StepTime(decode).Memory; !(u < 0.95*p) || d != p {
		t.Errorf("a decode step reads in %.4g s untied, %.4g tied, %.4g without: want the untied table unread, a tied one read as the head", u, d, p)
	}
	// "most of what a token multiplies": under half the weights, but a
	// mixture of experts' token multiplies through 2.1 B of its 10 B, and
	// the core would drop the term without a word.
	moe := strings.Replace(strings.Replace(gemmModel, "parameters_billions: 8.03", "parameters_billions: 10", 1),
		"    architecture:", "    experts: {count: 8, per_token: 1, parameters_billions: 9}\n    architecture:", 1)
	for name, c := range map[string]struct{ file, arch string }{
		"negative":                        {gemmModel, "{hidden_size: 4096, attention_heads: 32, vocab_size: -1}"},
		"no hidden size":                  {gemmModel, "{attention_heads: 32, vocab_size: 128256}"},
		"most of it":                      {gemmModel, "{hidden_size: 4096, attention_heads: 32, vocab_size: 1000000}"},
		"most of what a token multiplies": {moe, "{hidden_size: 4096, attention_heads: 32, vocab_size: 151936}"},
	} {
		file := strings.Replace(strings.Replace(c.file, "{tiles}", "", 1), "{hidden_size: 4096, attention_heads: 32}", c.arch, 1)
		if _, err := ParseModels("m.yml", []byte(file)); err == nil || !strings.Contains(err.Error(), "vocab_size") {
			t.Errorf("%s: %v, want a refusal naming vocab_size", name, err)
		}
	}
}
