package workload

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/workload/hftokenizer"
)

// fixtureTokenizer reads one of hftokenizer's real tokenizer.json files.
func fixtureTokenizer(t *testing.T, name string) *hftokenizer.Tokenizer {
	t.Helper()
	f, err := os.Open(filepath.Join("hftokenizer", "testdata", name+".tokenizer.json.gz"))
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

// TestVocabularyPromptsAreExact: under every real tokenizer of the
// fixtures (byte-level BPE, SentencePiece, Unigram, WordPiece), a synthetic prompt holds exactly the tokens asked
// (less the overhead), with or without a shared prefix and a spread, by
// the tokenizer's own count of the text sent.
func TestVocabularyPromptsAreExact(t *testing.T) {
	names := []string{"gpt2", "llama2", "llama3_1", "qwen3", "mistral_nemo", "gemma3", "deepseek_v3", "gptoss", "metaspace", "unigram", "wordpiece"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tok := fixtureTokenizer(t, name)
			v, err := NewVocabulary(tok)
			if err != nil {
				// Each family here counts filler words one by one.
				t.Fatalf("no vocabulary: %v", err)
			}
			cases := []struct {
				name string
				syn  Synthetic
			}{
				{"plain", Synthetic{Tokens: 64}},
				{"one", Synthetic{Tokens: 1}},
				{"long", Synthetic{Tokens: 2048}},
				{"overhead", Synthetic{Tokens: 512, Overhead: 11}},
				{"prefix", Synthetic{Tokens: 100, Overhead: 3, Prefix: Pool{Tokens: 300, Count: 4}}},
				{"spread", Synthetic{Tokens: 200, Spread: Spread{InputStddev: 50}}},
			}
			for _, c := range cases {
				syn := c.syn
				syn.Vocabulary, syn.Seed, syn.Nonce = v, 7, "n"
				for i := range 12 {
					in, _ := syn.Lengths(i)
					want := max(in-syn.Overhead, 1) + syn.Prefix.Tokens
					text := syn.Request(i).Messages[0].Content
					if got := tok.Count(text); got != want {
						t.Fatalf("%s request %d: %d tokens, want %d: %.80q", c.name, i, got, want, text)
					}
				}
			}
		})
	}
}

// TestVocabularyRefusesMergingCounters: a counter whose counts do not
// add up word by word gives no vocabulary, rather than wrong prompts.
func TestVocabularyRefusesMergingCounters(t *testing.T) {
	if _, err := NewVocabulary(pairCounter{}); err == nil {
		t.Fatal("a counter that merges word pairs gave a vocabulary")
	}
}

// pairCounter counts two words as one token, as a tokenizer merging
// across spaces would.
type pairCounter struct{}

func (pairCounter) Count(text string) int { return (len(strings.Fields(text)) + 1) / 2 }
