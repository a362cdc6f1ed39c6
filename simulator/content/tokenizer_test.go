package content

import (
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
	})
}
