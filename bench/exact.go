package bench

import (
	"fmt"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// ExactPrompts sizes synthetic prompts with the model's tokenizer: every
// prompt's text holds exactly its length in tokens by the tokenizer, and
// what the server adds around it (the chat template, a BOS token) is
// probed once and taken off. Two tagged probes (so neither warms a prefix
// a measured prompt will send) find the overhead and check that the
// server counts as the tokenizer does; when it does not (another model's
// tokenizer, or a server without usage), ok is false and the note says
// why, so the caller fits prompts against the server instead. With probe
// false (--no-calibrate) nothing is sent and no overhead is taken off.
func ExactPrompts(c Prober, tok workload.TokenCounter, syn workload.Synthetic, probe bool) (fit workload.Synthetic, note string, ok bool) {
	v, err := workload.NewVocabulary(tok)
	if err != nil {
		return syn, fmt.Sprintf("--tokenizer cannot size prompts exactly (%v)", err), false
	}
	syn.Vocabulary = v
	want := syn.Tokens + syn.Prefix.Tokens
	if !probe {
		return syn, fmt.Sprintf("input tokens: %d asked; each prompt's text holds exactly that many by --tokenizer (not calibrated: what the server's template adds is not taken off)", want), true
	}
	send := func(req workload.Request) (server, text int, ok bool) {
		req.MaxTokens = 1
		rec := &record.Record{}
		c.Probe(&req, rec)
		ok = rec.Class == "" && rec.UsageReported && rec.PromptTokens > 0
		return rec.PromptTokens, tok.Count(req.Text()), ok
	}
	// The probes carry no tag (whose tokens the two counts might share
	// differently): the first is a word no prompt opens with, the second
	// the text of index -1, which no measured request draws, without the
	// shared prefix, so neither warms what a measured prompt sends.
	small := workload.Request{Messages: []workload.Message{{Role: "user", Content: "knee"}}}
	server, text, sent := send(small)
	if !sent {
		return syn, "the server reports no usage.prompt_tokens, so what its template adds could not be probed", false
	}
	syn.Overhead = server - text
	if syn.Overhead < 0 || syn.Overhead > max(want/2, 64) {
		return syn, fmt.Sprintf("the server counts %d tokens for a message --tokenizer counts as %d: is --tokenizer the served model's?", server, text), false
	}
	check := syn
	check.Spread, check.Prefix, check.Tokens = workload.Spread{}, workload.Pool{}, want
	got, text, sent := send(check.Request(-1))
	if !sent || abs(got-want) > max(2, want*3/100) {
		return syn, fmt.Sprintf("the server counts %d tokens for a prompt of %d by --tokenizer (and %d of template): is --tokenizer the served model's?", got, text, syn.Overhead), false
	}
	asked := fmt.Sprint(want)
	if syn.Prefix.Tokens > 0 {
		asked = fmt.Sprintf("%d (a %d-token shared prefix and %d of the request's own)", want, syn.Prefix.Tokens, syn.Tokens)
	}
	return syn, fmt.Sprintf("input tokens: %s asked; each prompt holds exactly that many by --tokenizer, the template's %d taken off; a probe of the same shape counted %d (%s)",
		asked, syn.Overhead, got, missText(want, got)), true
}
