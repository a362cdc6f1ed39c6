package summary

import (
	"fmt"

	"github.com/kneebench/knee/results"
)

// templateAllowance is the prompt tokens a server may cache beyond what
// the prompts share when what its template adds was not probed: a chat
// template's fixed opening (about 30 tokens for Llama 3's) and the block
// it rounds up to.
const templateAllowance = 48

// maxTolerance bounds how far the reported and expected hit may differ
// unremarked, however short the prompts: a tolerance past the prompt
// itself once left 86.8% cached against 0% expected unsaid (47-token
// prompts).
const maxTolerance = 0.5

// cacheWarnings compares the cache hit the server reports with the one the
// prompts' own overlap explains, and says when they disagree by more than
// a template's opening and a few points: more cached than expected means
// something outside the run warmed the cache (an earlier run, a probe,
// other traffic), less means the server evicted or does not cache
// prefixes.
//
// What a template's opening explains is what the sizing probed it adds
// (templateTokens), else templateAllowance, and never more than
// maxTolerance of the prompt.
func cacheWarnings(c results.Cache, meanPrompt float64, templateTokens int, trackerFull bool) []string {
	var out []string
	if trackerFull {
		out = append(out, "the run sent more prompt text than knee tracks for the expected cache hit; the expected share reads low")
	}
	if !c.Reported || c.Expected == nil || meanPrompt <= 0 {
		return out
	}
	exp := *c.Expected
	allowance := float64(templateAllowance)
	if templateTokens > 0 {
		allowance = float64(templateTokens)
	}
	tol := min(0.03+allowance/meanPrompt, maxTolerance)
	switch {
	case c.HitRate > exp+tol:
		out = append(out, fmt.Sprintf("the server reports %.1f%% of prompt tokens cached where this run's prompts share %.1f%% with each other: "+
			"more than a chat template's opening explains, so the cache was warm from outside the run (an earlier run, another client), and TTFT reads low",
			100*c.HitRate, 100*exp))
	case exp > 0.05 && c.HitRate < exp-tol:
		out = append(out, fmt.Sprintf("this run's prompts share %.1f%% of their tokens with earlier ones, but the server reports only %.1f%% cached: "+
			"it evicted them or does not cache prefixes (vLLM: --enable-prefix-caching; SGLang caches by default)", 100*exp, 100*c.HitRate))
	}
	return out
}
