package cmd

import (
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// Bounds past which a size is a typo rather than a workload.
const (
	maxTokensBound = 10_000_000
	maxCountBound  = 1_000_000_000
	maxRateBound   = 1_000_000
)

// check reports the load flags that are out of range. A zero given on
// purpose is an error, not a request for the default: --rate 0 used to
// run a closed loop of one.
func (f *loadFlags) check(c *cobra.Command) error {
	fs := c.Flags()
	if math.IsNaN(f.rate) || math.IsInf(f.rate, 0) || math.IsNaN(f.burstiness) || math.IsInf(f.burstiness, 0) {
		return usageErr("--rate and --burstiness must be finite numbers")
	}
	if f.concurrency < 0 || f.rate < 0 || f.maxConcurrency < 0 || f.requests < 0 || f.duration < 0 ||
		f.inputTokens < 0 || f.maxTokens < 0 || f.warmup < -1 || f.drain < 0 {
		return usageErr("counts, rates and durations must not be negative")
	}
	for _, name := range []string{"rate", "concurrency", "requests", "duration", "input-tokens"} {
		if fl := fs.Lookup(name); fl != nil && fs.Changed(name) {
			if v := fl.Value.String(); v == "0" || v == "0s" {
				return usageErr("--%s 0 measures nothing; give a positive value (or leave the flag out)", name)
			}
		}
	}
	if f.rate > maxRateBound || f.concurrency > maxCountBound || f.maxConcurrency > maxCountBound || f.requests > maxCountBound {
		return usageErr("--rate, --concurrency, --max-concurrency or --requests is absurdly large")
	}
	if f.inputTokens > maxTokensBound || f.maxTokens > maxTokensBound {
		return usageErr("--input-tokens and --max-tokens must be at most %d", maxTokensBound)
	}
	return nil
}

// checkBaseURL catches the usual mistakes in --base-url before anything is
// sent, with a hint at the fix.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if !strings.Contains(raw, "://") {
			return usageErr("--base-url %q has no scheme: try http://%s", raw, strings.TrimLeft(raw, "/"))
		}
		return usageErr("--base-url %q is not a URL like http://host:8000/v1", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return usageErr("--base-url %q: the scheme must be http or https", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/chat/completions", "/completions", "/models"} {
		if strings.HasSuffix(p, suffix) {
			return usageErr("--base-url %q names an endpoint; give the API root instead: %s", raw, strings.TrimSuffix(strings.TrimRight(raw, "/"), suffix))
		}
	}
	return nil
}

// inputSizeWarnings says when the measured prompts miss the size asked by
// more than 5%, or when the server never counted them.
func inputSizeWarnings(want int, tk results.Tokens) []string {
	if !tk.UsageReported || tk.Input.Count == 0 {
		return []string{fmt.Sprintf("--input-tokens %d could not be checked: the server reported no prompt_tokens", want)}
	}
	if miss := math.Abs(tk.Input.Mean-float64(want)) / float64(want); miss > 0.05 {
		return []string{fmt.Sprintf("prompts averaged %.0f server tokens against --input-tokens %d (%.0f%% off)", tk.Input.Mean, want, 100*miss)}
	}
	return nil
}
