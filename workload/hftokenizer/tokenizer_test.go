package hftokenizer

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fixtures are real tokenizer.json files cut to the test corpus (see
// scripts/tokenizer-fixtures), and three of the shapes no packaged model
// here ships, each with Hugging Face's tokenizers' own ids for the corpus.
var fixtures = []string{
	"llama3_1", "qwen3", "llama2", "gemma3", "gpt2", "deepseek_v3", "gptoss", "mistral_nemo",
	"metaspace", "unigram", "wordpiece",
}

func loadFixture(t testing.TB, name string) *Tokenizer {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".tokenizer.json.gz"))
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
	tok, err := Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tok
}

func readJSON(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// TestMatchesReference checks every id of every corpus text against the
// reference: multilingual prose, code, whitespace runs, emoji sequences,
// chat-template markers, control characters and random mixtures of them.
func TestMatchesReference(t *testing.T) {
	var corpus []string
	readJSON(t, "corpus.json", &corpus)
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			tok := loadFixture(t, name)
			var want [][]int
			readJSON(t, name+".ids.json", &want)
			if len(want) != len(corpus) {
				t.Fatalf("%d reference encodings for %d texts", len(want), len(corpus))
			}
			bad := 0
			for i, text := range corpus {
				got := tok.Encode(text)
				if !slices.Equal(got, want[i]) {
					if bad++; bad <= 3 {
						t.Errorf("text %d %q:\n got %v\nwant %v", i, text, got, want[i])
					}
				}
				if n := tok.Count(text); n != len(want[i]) {
					t.Errorf("text %d: Count %d, want %d", i, n, len(want[i]))
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d texts differ", bad, len(corpus))
			}
		})
	}
}

func BenchmarkCount(b *testing.B) {
	var corpus []string
	readJSON(b, "corpus.json", &corpus)
	for _, name := range []string{"llama3_1", "llama2", "unigram"} {
		b.Run(name, func(b *testing.B) {
			tok := loadFixture(b, name)
			n := 0
			for _, s := range corpus {
				n += len(s)
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				for _, s := range corpus {
					tok.Count(s)
				}
			}
		})
	}
}
