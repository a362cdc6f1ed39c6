package summary

import (
	"fmt"
	"sync"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
)

// turnGrowth watches a call's prompts grow: each later turn carries the
// conversation so far, so its prompt is larger than the turn before. A
// server that drops the history (previous_response_id ignored, a cache
// keyed wrong) answers turns of a few tokens, and the run would measure
// short prompts while saying it measured conversations.
type turnGrowth struct {
	mu           sync.Mutex
	last         map[int]int
	grew, shrank int64
}

// add notes a measured turn's prompt against its call's previous one.
func (g *turnGrowth) add(r *record.Record) {
	if r.Tag == 0 || !r.UsageReported || r.PromptTokens <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		g.last = map[int]int{}
	}
	if prev := g.last[r.Call]; prev > 0 {
		if r.PromptTokens > prev {
			g.grew++
		} else {
			g.shrank++
		}
	}
	g.last[r.Call] = r.PromptTokens
}

// warn says when later turns' prompts did not grow.
func (g *turnGrowth) warn(res *results.Run) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shrank == 0 {
		return
	}
	why := "the conversation's history is not reaching the model"
	if res.Config.History == "server" {
		why = "the server does not seem to keep the conversation previous_response_id names (knee sends only each turn's new message)"
	}
	res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d later turns sent a prompt no larger than their call's turn before: %s; their latencies are of short prompts",
		g.shrank, g.shrank+g.grew, why))
}
