package content

import (
	"strings"
	"testing"
)

func TestRequiredLiterals(t *testing.T) {
	cases := []struct {
		re   string
		want []string
	}{
		{`weather in (?P<city>\w+)`, []string{"weather in "}},
		{`\bexplain\b`, []string{"explain"}},
		{`(cat|dog)food`, []string{"food"}},
		{`ab?c`, []string{"a", "c"}},
		{`(?:HELLO)+ world`, []string{"hello", " world"}},
	}
	for _, tc := range cases {
		got, err := requiredLiterals(tc.re)
		if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("requiredLiterals(%q) = %q, %v; want %q", tc.re, got, err, tc.want)
		}
	}
}

func TestLowerASCIIAndLiterals(t *testing.T) {
	for _, s := range []string{"", "abc", "Hello WORLD, zZ@[`{", "MiXeD 123 ÉCOLE", strings.Repeat("AbC", 50)} {
		if got, want := lowerASCII(s), strings.ToLower(s); got != want {
			t.Errorf("lowerASCII(%q) = %q, want %q", s, got, want)
		}
	}
	text := "the quick brown fox jumps over the lazy dog"
	for _, tc := range []struct {
		lit  string
		want bool
	}{{"quick", true}, {"lazy dog", true}, {"the", true}, {"dog!", false}, {"zebra", false}, {"g", true}, {"", true}} {
		if got := newLiteral(tc.lit).in(text); got != tc.want {
			t.Errorf("%q in text = %v, want %v", tc.lit, got, tc.want)
		}
	}
}
