package bench

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// ErrFilteredOut is returned when a dataset's length bounds leave none of
// its entries; ErrEmptyPrompt when an entry would be an empty prompt on
// the completions endpoint. Both are the user's to fix before anything is
// sent.
var (
	ErrFilteredOut = errors.New("every entry was filtered out")
	ErrEmptyPrompt = errors.New("an entry has no text")
)

// DatasetFile is a dataset file read and checked but not yet sized:
// sizing needs the model's tokenizer or the server's own count, so it
// happens once the target is known (Series does it, once for all levels).
type DatasetFile struct {
	Path   string
	Parsed *workload.ParsedDataset
	// Filters bound the entries' lengths; Tokenizer, when set, counts them
	// (else the server's prompt_tokens, through probes).
	Filters   workload.Filters
	Tokenizer *workload.HFTokenizer
	// Sample is how many entries to sample (0: as many as the levels
	// send, or all); Repeat starts every level at the first sampled entry
	// instead of where the last level stopped.
	Sample int
	Repeat bool
	// BlockTokens is the tokens a trace's hash id stands for.
	BlockTokens int
	// LiveHistory replays conversations with the server's own answers as
	// the history of later turns, not the recorded ones.
	LiveHistory bool
	// sizing is how Size counted and chose the entries, for the result.
	sizing results.DatasetSizing
	// images reads the file's images (nil: it names none).
	images *datasetImages
}

// Format is the file's format, as read.
func (p *DatasetFile) Format() workload.DatasetFormat { return p.Parsed.Format }

// TraceRate is the mean rate of a trace's lines at its own speed, or 0
// for a file whose lines carry no timestamps.
func (p *DatasetFile) TraceRate() float64 {
	if !p.Parsed.Timed {
		return 0
	}
	return workload.TraceRate(workload.TraceSchedule(p.Parsed.Entries, 1))
}

// size counts, filters and samples the dataset once: with the tokenizer
// when given, else against the server's own prompt_tokens (probes fit a
// tokens-per-character ratio). need is how many entries the run or sweep
// will send (0: unknown, size them all). It returns the source and a line
// saying how the lengths were counted.
func (p *DatasetFile) size(client Prober, defaultOutput, need int, seed uint64) (workload.Dataset, string, error) {
	var count workload.TokenCounter
	var how string
	entries := p.Parsed.Entries
	if p.Tokenizer != nil {
		count, how = p.Tokenizer, "counted with the tokenizer "+p.Tokenizer.Path()
	} else {
		c, note := CalibratedCounter(client, entries)
		count, how = c, note
	}
	n := p.Sample
	if n == 0 {
		n = need
	}
	kept, sz := workload.Size(entries, count, p.Filters, defaultOutput, n, seed)
	p.sizing = sizingOf(count, p.Filters, len(kept), p.BlockTokens)
	if len(kept) == 0 {
		return workload.Dataset{}, "", fmt.Errorf("%s: %w: every one of its %d entries is outside the length bounds (min %d, max prompt %d, max context %d tokens; 0 is no bound)",
			p.Path, ErrFilteredOut, len(entries), p.Filters.MinTokens, p.Filters.MaxPromptTokens, p.Filters.MaxContext)
	}
	order := fmt.Sprintf("sampled with seed %d", seed)
	if p.Parsed.Timed {
		order = "in the trace's order"
	}
	note := fmt.Sprintf("dataset %s (%s): %s, %s; lengths %s", p.Path, p.Format(), sz.Describe(len(entries), len(kept)), order, how)
	if p.Parsed.LengthKey != "" {
		note += fmt.Sprintf("; output lengths from each line's %q, --max-tokens %d where a line has none", p.Parsed.LengthKey, defaultOutput)
	} else if p.Format() != workload.FormatShareGPT {
		note += fmt.Sprintf("; no line gives an output length: every request asks for --max-tokens %d", defaultOutput)
	}
	ds := workload.Dataset{Entries: kept, DefaultMaxTokens: defaultOutput, Blocks: workload.TraceBlocks{BlockTokens: p.BlockTokens, Seed: seed}}
	return ds, note, nil
}

// sizeConversations counts the recorded answers of every conversation
// (with the tokenizer, or against the server), so each replayed turn asks
// for the length the recording answered with, and orders them by the
// seed (a sample of --num-prompts when given).
func (p *DatasetFile) sizeConversations(client Prober, defaultOutput int, seed uint64) (workload.Conversations, string) {
	var count workload.TokenCounter
	var how string
	if p.Tokenizer != nil {
		count, how = p.Tokenizer, "counted with the tokenizer "+p.Tokenizer.Path()
	} else {
		count, how = CalibratedCounter(client, p.Parsed.Entries)
	}
	convs := workload.PickConversations(p.Parsed.Conversations, count, p.Sample, seed)
	p.sizing = sizingOf(count, workload.Filters{}, len(convs), 0)
	turns, recorded := 0, 0
	for _, c := range convs {
		turns += len(c.Turns)
		for _, t := range c.Turns[:max(len(c.Turns)-1, 0)] {
			if t.Answer != "" {
				recorded++
			}
		}
	}
	answerable := turns - len(convs) // a conversation's last answer is never history
	var history string
	switch {
	case p.LiveHistory:
		history = "the server's own answers as history"
	case recorded == 0:
		history = "the server's own answers as history (the file records none)"
	case recorded < answerable:
		history = fmt.Sprintf("the recorded answers as history where the file has them (%d of %d), the server's elsewhere", recorded, answerable)
	default:
		history = "the recorded answers as history"
	}
	note := fmt.Sprintf("conversations from %s (%s): %d conversations of %d turns in all, in an order drawn with seed %d; every turn measured, %s; answer lengths %s",
		p.Path, p.Format(), len(convs), turns, seed, history, how)
	return workload.Conversations{Convs: convs, LiveHistory: p.LiveHistory, DefaultMaxTokens: defaultOutput, Seed: seed}, note
}

// trackedCalls is a level's conversations that remember how many the
// level took, so the next level starts after them.
type trackedCalls struct {
	workload.Conversations
	top    atomic.Int64
	images *datasetImages
}

// Turn implements workload.Calls, with the turn's images as sent.
func (t *trackedCalls) Turn(c workload.Call, k int, answers []string) workload.Request {
	return t.images.request(t.Conversations.Turn(c, k, answers))
}

// Call implements workload.Calls.
func (t *trackedCalls) Call(i int) workload.Call {
	for {
		top := t.top.Load()
		if int64(i) < top || t.top.CompareAndSwap(top, int64(i)+1) {
			break
		}
	}
	return t.Conversations.Call(i)
}

func (t *trackedCalls) used() int { return int(t.top.Load()) }

// repeatWarning says that a level's conversations repeat, when they did.
func (t *trackedCalls) repeatWarning(resent bool) string {
	if resent {
		return "--dataset-repeat: this level replayed the conversations of earlier levels; a prefix-caching server answers them warm"
	}
	if t.Offset+t.used() > len(t.Convs) {
		return fmt.Sprintf("the dataset's %d conversations ran out during this level: from there they repeat, and a prefix-caching server answers them warm", len(t.Convs))
	}
	return ""
}

// sizingOf records how a dataset was counted and filtered.
func sizingOf(count workload.TokenCounter, f workload.Filters, kept, blocks int) results.DatasetSizing {
	s := results.DatasetSizing{Counter: "words", Kept: kept, MinTokens: f.MinTokens, MaxPromptTokens: f.MaxPromptTokens, MaxContext: f.MaxContext, BlockTokens: blocks}
	switch c := count.(type) {
	case *workload.HFTokenizer:
		s.Counter, s.Tokenizer = "tokenizer", c.Path()
	case CharCounter:
		s.Counter, s.CharsPerToken = "chars", 1/c.PerChar
	}
	return s
}

// CheckText refuses, before anything is sent, entries that would be an
// empty prompt on an endpoint that sends the prompt as text (completions,
// /generate: the messages' contents joined): every such request would
// fail.
func (p *DatasetFile) CheckText(e kind.Name) error {
	for _, entry := range p.Parsed.Entries {
		if entry.InputLength > 0 {
			continue
		}
		if strings.TrimSpace((workload.Request{Messages: entry.Messages}).Text()) == "" {
			return fmt.Errorf("%s: line %d: %w, which the %s endpoint would send as an empty prompt", p.Path, entry.Line, ErrEmptyPrompt, e)
		}
	}
	return nil
}

// lengthsOnly says whether some lines give a prompt's length and no text:
// their prompts are knee's filler, which is then calibrated.
func (p *DatasetFile) lengthsOnly() bool {
	for _, e := range p.Parsed.Entries {
		if e.Messages == nil && e.InputLength > 0 {
			return true
		}
	}
	return false
}

// DatasetNeed is how many entries a run or sweep sends, as far as can be
// told before it starts: levels times a count bound, or an open loop's
// rate over its window with a margin; 0 (every entry) when it cannot be
// told, as for a closed loop bounded by time.
func DatasetNeed(load driver.Load, levels []float64, rateAxis bool) int {
	warm := max(load.DefaultWarmup(), 0)
	if load.Requests > 0 {
		return len(levels) * (load.Requests + warm)
	}
	if !rateAxis || load.Duration <= 0 {
		return 0
	}
	need := 0.0
	for _, r := range levels {
		n := r * load.Duration.Seconds()
		need += n + 4*math.Sqrt(n) + float64(warm) + 8
	}
	return int(math.Min(need, 1e7))
}

// trackedDataset is a level's dataset source that remembers how far into
// the dataset the level went, so the next level starts after it.
type trackedDataset struct {
	workload.Dataset
	top    atomic.Int64 // the highest request index taken, plus one
	images *datasetImages
}

// Request implements workload.Source.
func (t *trackedDataset) Request(i int) workload.Request {
	for {
		top := t.top.Load()
		if int64(i) < top || t.top.CompareAndSwap(top, int64(i)+1) {
			break
		}
	}
	return t.images.request(t.Dataset.Request(i))
}

// used is how many entries the level took.
func (t *trackedDataset) used() int { return int(t.top.Load()) }

// repeatWarning says that a level's prompts repeat, when they did:
// resent by --dataset-repeat after an earlier level, or the dataset ran out.
func (t *trackedDataset) repeatWarning(resent string) string {
	if resent != "" {
		return resent
	}
	if !t.Repeats(t.used()) {
		return ""
	}
	return fmt.Sprintf("the dataset's %d sampled entries ran out at request %d of this level: from there prompts repeat, and a prefix-caching server answers them warm (give --num-prompts, a larger file, or fewer requests)",
		len(t.Entries), max(len(t.Entries)-t.Offset, 0))
}
