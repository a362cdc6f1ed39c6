package bench

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/workload"
)

// wordServer counts a prompt as its words plus a chat template of five
// tokens, as a server reporting usage.prompt_tokens would.
type wordServer struct{}

func (wordServer) Probe(r *workload.Request, rec *Record) {
	n := 5
	for _, m := range r.Messages {
		n += len(strings.Fields(m.Content))
	}
	rec.PromptTokens, rec.UsageReported = n, true
}

// TestSizedPromptsWithSpread: with lengths spread around the asked size,
// the prompts are still sized for the asked mean; the probe is of the
// asked size, not of one random draw (which once shifted a 1024 ± 350
// workload to a mean of 851).
func TestSizedPromptsWithSpread(t *testing.T) {
	for _, sp := range []workload.Spread{{}, {InputStddev: 350}, {RangeRatio: 0.6}} {
		syn := workload.Synthetic{Tokens: 1024, MaxTokens: 8, Seed: 7, Nonce: "[n]", Spread: sp}
		fit, _ := SizedPrompts(wordServer{}, Calibrate(wordServer{}), syn)
		sum := 0
		const n = 2000
		for i := range n {
			rec := &Record{}
			req := fit.Request(i)
			wordServer{}.Probe(&req, rec)
			sum += rec.PromptTokens
		}
		if mean := float64(sum) / n; mean < 1024*0.98 || mean > 1024*1.02 {
			t.Errorf("spread %+v: the server counts a mean of %.1f prompt tokens, asked 1024", sp, mean)
		}
	}
}
