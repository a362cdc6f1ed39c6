package live

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// CheckPrefixCache runs one call of v against the target and checks that
// turn 2 reused the warm prefix: at least 90% of the system prompt cached
// (knee validate).
func CheckPrefixCache(ctx context.Context, c *transport.Client, v workload.Voice) results.Validation {
	c.SetStart(time.Now())
	script := v.Call(0)
	var turns []results.ValidationTurn
	var answers []string
	for k := 1; k <= v.Turns; k++ {
		if k > 1 && !transport.SleepCtx(ctx, script.Gaps[k-1]) {
			return results.Validation{Turns: turns, Verdict: "interrupted"}
		}
		req := v.Turn(script, k, answers)
		var rec record.Record
		c.Do(&req, &rec, true)
		tr := results.ValidationTurn{Turn: k, PromptTokens: rec.PromptTokens, CachedTokens: rec.CachedTokens,
			CachedReported: rec.CachedReported, Error: rec.Class, Message: rec.Message}
		if rec.Chunks > 0 {
			tr.TTFTMs = float64(rec.FirstToken-rec.Sent) / 1e6
		}
		switch {
		case rec.CachedFromTimings:
			tr.CachedSource = "timings"
		case rec.CachedReported:
			tr.CachedSource = "usage"
		}
		turns = append(turns, tr)
		if rec.Class != "" {
			break
		}
		answers = append(answers, string(rec.Text))
	}
	return Diagnose(turns, v.SystemPromptTokens, c.Endpoint().Kind().Cached)
}

// Diagnose turns the validation call's turns into a verdict. It is a pure
// function, so every diagnosis is tested without a server.
func Diagnose(turns []results.ValidationTurn, systemTokens int, cachedField string) results.Validation {
	v := results.Validation{Turns: turns}
	for _, t := range turns {
		if t.Error != "" {
			v.Verdict = fmt.Sprintf("FAIL: turn %d failed (%s)", t.Turn, t.Error)
			v.Diagnosis = fmt.Sprintf("the server answered turn %d with %s: %s. Fix the errors before measuring.", t.Turn, t.Error, t.Message)
			return v
		}
	}
	if len(turns) < 2 {
		v.Verdict = "FAIL: the call needs at least two turns"
		return v
	}
	t2 := turns[1]
	if !t2.CachedReported {
		v.Verdict = "FAIL: the server does not report cached tokens"
		v.Diagnosis = cmp.Or(cachedField, "a cached-token count") + " is missing from the responses (and no llama.cpp timings.cache_n either). " +
			"Start vLLM with --enable-prompt-tokens-details, or SGLang with --enable-cache-report; llama.cpp's llama-server sends " +
			"timings.cache_n in every response of a recent build. Then run knee validate again."
		return v
	}
	need := systemTokens * 9 / 10
	if t2.CachedTokens >= need {
		v.OK = true
		v.Verdict = fmt.Sprintf("OK: turn 2 reused the warm prefix (cached %s of %s prompt tokens)", thousands(t2.CachedTokens), thousands(t2.PromptTokens))
		if t2.CachedSource == "timings" {
			v.Verdict += ", as llama.cpp's timings.cache_n counts them"
		}
		return v
	}
	v.Verdict = fmt.Sprintf("FAIL: turn 2 cached %s of %s prompt tokens, under 90%% of the %s-token system prompt",
		thousands(t2.CachedTokens), thousands(t2.PromptTokens), thousands(systemTokens))
	v.Diagnosis = "the warm prefix did not hit. Likely causes: prefix caching is off (vLLM: drop --no-enable-prefix-caching; " +
		"SGLang: drop --disable-radix-cache; llama.cpp: a request with \"cache_prompt\": false, or --parallel slots that each keep " +
		"their own prompt cache, so turn 2 landed on another slot: raise --slot-prompt-similarity or serve one slot per call); " +
		"the KV cache is too small to keep the prefix through the gap " +
		"(other traffic evicted it); or something in the per-call prefix differs between turns (a timestamp or id in the system prompt, " +
		"a chat template that rewrites history)."
	return v
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	out := ""
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out += ","
		}
		out += string(ch)
	}
	return out
}
