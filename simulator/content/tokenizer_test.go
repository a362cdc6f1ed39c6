package content

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"don't", []string{"don", "'t"}},
		{"We'LL go", []string{"We", "'LL", " go"}},
		{"12345 apples", []string{"123", "45", " apples"}},
		{"a   b", []string{"a", "  ", " b"}},
		{"end  ", []string{"end", "  "}},
		{"hi!!! ok", []string{"hi", "!!!", " ok"}},
		{"line\nnext", []string{"line", "\n", "next"}},
		{"line\n\nnext", []string{"line", "\n", "\n", "next"}},
		{"你好 世界", []string{"你", "好", " 世", "界"}},
		{"snake_case", []string{"snake", "_", "case"}},
		{" x", []string{" x"}},
		{"café au lait", []string{"café", " au", " lait"}},
		{"", nil},
	}
	for _, tc := range cases {
		got := Tokenize(tc.in)
		if len(got) == 0 {
			got = nil
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Join(got, "") != tc.in {
			t.Errorf("Tokenize(%q) is not lossless", tc.in)
		}
		if CountTokens(tc.in) != len(tc.want) {
			t.Errorf("CountTokens(%q) = %d, want %d", tc.in, CountTokens(tc.in), len(tc.want))
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"Hello, world!", "don't 12345\n\n  x", "你好\u00a0é\x80", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokenize(s)
		if strings.Join(toks, "") != s {
			t.Fatalf("not lossless: %q", s)
		}
		for _, tok := range toks {
			if tok == "" {
				t.Fatalf("empty token in %q", s)
			}
		}
		if CountTokens(s) != len(toks) {
			t.Fatal("count differs")
		}
		if !slices.Equal(AppendTokenIDs(nil, s), idsOfTokens(toks)) {
			t.Fatalf("AppendTokenIDs(%q) differs from the ids of Tokenize's tokens", s)
		}
	})
}

// idsOfTokens is what AppendTokenIDs must give: each token's TokenID.
func idsOfTokens(toks []string) []uint64 {
	ids := make([]uint64, len(toks))
	for i, tok := range toks {
		ids[i] = TokenID(tok)
	}
	return ids
}

// TestAppendTokenIDsMatchesTokenize holds the one-pass ASCII word path
// to the scanner's tokens where the two could part: a word meeting a
// non-ASCII letter or mark, a contraction, a space run, a word at the
// text's end.
func TestAppendTokenIDsMatchesTokenize(t *testing.T) {
	for _, s := range []string{
		"the model answers", " leading space", "café au lait", "naïve words", "e\u0301t\u00e9",
		"don't we'll", "two  spaces", "end\n\nnext", "word", " ", "a 12 b", "x,y", "ends in é",
		"Hello WORLD", "you're'", "日本 語", "tab\tword",
	} {
		if got, want := AppendTokenIDs(nil, s), idsOfTokens(Tokenize(s)); !slices.Equal(got, want) {
			t.Errorf("AppendTokenIDs(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestDigestIsFNV holds the in-place digest to FNV-1a over the bytes it
// was defined on, so a request's answer stays what it was.
func TestDigestIsFNV(t *testing.T) {
	for _, tc := range []struct {
		seed     uint64
		id, text string
	}{{0, "default", ""}, {42, "default", "hello there"}, {1 << 63, "entry-3", "naïve café 日本"}} {
		h := fnv.New64a()
		h.Write(binary.LittleEndian.AppendUint64(nil, tc.seed))
		h.Write([]byte(tc.id))
		h.Write([]byte{0})
		h.Write([]byte(tc.text))
		if got, want := digestOf(tc.seed, tc.id, tc.text), h.Sum64(); got != want {
			t.Errorf("digestOf(%d, %q, %q) = %x, want %x", tc.seed, tc.id, tc.text, got, want)
		}
	}
}
