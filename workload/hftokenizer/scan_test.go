package hftokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// scanAlphabet mixes every class the split patterns tell apart: cased and
// uncased letters, marks, every kind of number, apostrophes, spaces of
// every sort, newlines, punctuation and symbols.
var scanAlphabet = []string{
	"a", "Z", "é", "ß", "İ", "ǅ", "ſ", "K", "中", "ひ", "한", "ก", "\u0301", "ि", "्",
	"0", "7", "٣", "७", "Ⅻ", "½", "²", "𝟘",
	"'", "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'x",
	" ", " ", " ", "\t", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b", "\ufeff", "\v", "\f",
	"\n", "\r", "\r\n", "\n\n",
	".", ",", "!", "?", "-", "_", "/", "(", "<", "|", "$", "%", "+", "🎉", "\u200d", "👍🏽", "\x01", "\x7f",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(24); n >= 0; n-- {
		b.WriteString(scanAlphabet[r.IntN(len(scanAlphabet))])
	}
	return b.String()
}

// TestScannersMatchEngine holds each hand scanner to the regular
// expression engine on random text.
func TestScannersMatchEngine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, pattern := range []string{gpt2Split, llama3Split, qwenSplit} {
		sc, ok := knownScanner(pattern)
		if !ok {
			t.Fatalf("no scanner for %q", pattern)
		}
		re, err := compileRegex(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20000; i++ {
			s := randomText(r)
			if got, want := sc.find(s), re.find(s); !slices.Equal(got, want) {
				t.Fatalf("pattern %.30q on %q:\n scanner %v\n  engine %v", pattern, s, got, want)
			}
		}
	}
}

func FuzzScanners(f *testing.F) {
	for _, s := range scanAlphabet {
		f.Add(s + " x")
	}
	f.Add("it's  \n\n hello 12345")
	engines := map[string]*regex{}
	for _, p := range []string{gpt2Split, llama3Split, qwenSplit} {
		re, err := compileRegex(p)
		if err != nil {
			f.Fatal(err)
		}
		engines[p] = re
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ToValidUTF8(s, "\uFFFD")
		for p, re := range engines {
			sc, _ := knownScanner(p)
			if got, want := sc.find(s), re.find(s); !slices.Equal(got, want) {
				t.Fatalf("pattern %.30q on %q:\n scanner %v\n  engine %v", p, s, got, want)
			}
		}
	})
}
