package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// TokenCounter counts the tokens of a text as the served model does.
type TokenCounter interface {
	Count(text string) int
}

// Filters are the length bounds a dataset's entries must meet, as vLLM's
// benchmark applies them (min 4 tokens of prompt and of output, prompts
// of at most 1,024 tokens, prompt plus output at most 2,048, for
// ShareGPT). Zero leaves a bound out.
type Filters struct {
	MinTokens, MaxPromptTokens, MaxContext int
}

// ShareGPTFilters are vLLM's defaults for ShareGPT.
var ShareGPTFilters = Filters{MinTokens: 4, MaxPromptTokens: 1024, MaxContext: 2048}

// DefaultMaxTokens is the output length of a request whose dataset line
// gives none when no --max-tokens is set either: a request is never sent
// without a bound.
const DefaultMaxTokens = 128

// Sizing is how Size went: how many entries it counted, how many the
// bounds dropped, and whether it ran out before it had as many as asked.
type Sizing struct {
	Examined, Dropped int
	Short             bool
}

// Size counts entries' input tokens (and a reference answer's output
// tokens) with count and keeps those that pass f, until n are kept (n ≤ 0:
// all). Untimed entries are taken in an order shuffled by the seed, as
// vLLM samples --num-prompts, so only as many are counted as are needed;
// a trace keeps its order, its lines being its schedule. defaultOutput
// sizes entries without a length of their own.
func Size(entries []DatasetEntry, count TokenCounter, f Filters, defaultOutput, n int, seed uint64) ([]DatasetEntry, Sizing) {
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	timed := len(entries) > 0 && entries[0].Timed
	if !timed {
		r := rand.New(rand.NewPCG(seed, 0xda7a5e7))
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	var kept []DatasetEntry
	var sz Sizing
	for _, i := range order {
		if n > 0 && len(kept) >= n {
			break
		}
		sz.Examined++
		e := entries[i]
		in := e.InputLength
		for _, m := range e.Messages {
			in += count.Count(m.Content)
		}
		out := e.MaxTokens
		if e.Reference != "" {
			out = count.Count(e.Reference)
		}
		if out == 0 {
			out = defaultOutput
		}
		e.InputTokens, e.OutputTokens = in, out
		if !passes(f, in, out, e.Reference != "") {
			sz.Dropped++
			continue
		}
		kept = append(kept, e)
	}
	sz.Short = n > 0 && len(kept) < n
	return kept, sz
}

func passes(f Filters, in, out int, hasReference bool) bool {
	switch {
	case f.MinTokens > 0 && (in < f.MinTokens || (hasReference && out < f.MinTokens)):
		return false
	case f.MaxPromptTokens > 0 && in > f.MaxPromptTokens:
		return false
	case f.MaxContext > 0 && in+out > f.MaxContext:
		return false
	}
	return true
}

// Dataset cycles through sized entries, from Offset on: a sweep's levels
// continue where the one before stopped, so no level measures prompts an
// earlier one left in the server's cache until the dataset runs out.
type Dataset struct {
	Entries          []DatasetEntry
	DefaultMaxTokens int
	// Offset is the entry the level's request 0 takes.
	Offset int
	// Blocks builds the prompts of trace lines that give only lengths.
	Blocks TraceBlocks
	// ByLength sends each entry as filler of its counted length instead of
	// its text: a replay on another tokenizer (knee calibrate) keeps the
	// lengths the measured server counted.
	ByLength bool
}

// Entry returns the entry request i takes.
func (d Dataset) Entry(i int) DatasetEntry {
	n := len(d.Entries)
	return d.Entries[((d.Offset+i)%n+n)%n]
}

// Request implements Source. A ShareGPT entry asks for its reference
// answer's length with ignore_eos, so every run generates what the
// recorded conversation did; so does a trace line's output_length.
func (d Dataset) Request(i int) Request {
	e := d.Entry(i)
	req := Request{Messages: e.Messages, MaxTokens: e.MaxTokens, Tools: e.Tools}
	switch {
	case e.Messages == nil && e.InputLength > 0:
		req.Messages = []Message{{Role: "user", Content: d.Blocks.Prompt(e, d.Offset+i)}}
	case d.ByLength:
		req.Messages = []Message{{Role: "user", Content: d.Blocks.Prompt(DatasetEntry{InputLength: max(e.InputTokens, 1)}, d.Offset+i)}}
	}
	switch {
	case e.Reference != "" && e.OutputTokens > 0:
		req.MaxTokens, req.IgnoreEOS = e.OutputTokens, true
	case e.InputLength > 0 && e.MaxTokens > 0:
		req.IgnoreEOS = true
	}
	if req.MaxTokens <= 0 {
		req.MaxTokens = d.DefaultMaxTokens
	}
	if req.MaxTokens <= 0 {
		req.MaxTokens = DefaultMaxTokens
	}
	return req
}

// Repeats says whether requests [0, n) of the level take some entry twice
// or take one an earlier level took: prompts a prefix cache may hold.
func (d Dataset) Repeats(n int) bool { return d.Offset+n > len(d.Entries) }

// WordCounter counts whitespace-separated words: the sizing of last resort
// when neither a tokenizer nor the server can count.
type WordCounter struct{}

// Count implements TokenCounter.
func (WordCounter) Count(text string) int { return len(strings.Fields(text)) }

// Describe says how a dataset was sized, for the run's notes.
func (sz Sizing) Describe(total, kept int) string {
	s := fmt.Sprintf("%d entries, %d counted, %d dropped by the length bounds, %d kept", total, sz.Examined, sz.Dropped, kept)
	if sz.Short {
		s += " (fewer than asked: every entry was counted)"
	}
	return s
}
