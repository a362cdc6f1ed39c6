package summary

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestCacheWarnings: a hit the prompts' overlap and the template's
// opening cannot explain is said, however short the prompts (86.8% cached
// against 0% expected went unsaid at a 47-token mean, the allowance
// formula past the prompt itself); a hit the template explains is not.
func TestCacheWarnings(t *testing.T) {
	cases := []struct {
		name           string
		hit, expected  float64
		meanPrompt     float64
		templateTokens int
		want           string // "" for no warning
	}{
		{"short prompts warmed from outside, template probed", 0.868, 0, 47, 13, "warm from outside the run"},
		{"short prompts warmed from outside, template unknown", 0.868, 0, 47, 0, "warm from outside the run"},
		{"the template's opening alone", 0.25, 0, 47, 13, ""},
		{"long prompts, a template's worth", 0.02, 0, 2048, 0, ""},
		{"long prompts warmed", 0.30, 0, 2048, 30, "warm from outside the run"},
		{"evicted", 0.01, 0.6, 512, 13, "evicted them"},
		{"as expected", 0.6, 0.6, 512, 13, ""},
	}
	for _, c := range cases {
		exp := c.expected
		got := cacheWarnings(results.Cache{Reported: true, HitRate: c.hit, Expected: &exp}, c.meanPrompt, c.templateTokens, false)
		said := strings.Join(got, " ")
		if (c.want == "") != (said == "") || !strings.Contains(said, c.want) {
			t.Errorf("%s: %q, want %q", c.name, said, c.want)
		}
	}
}
