package cmd

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync/atomic"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
	"github.com/spf13/cobra"
)

// datasetFlags say how a --dataset file is read, sized and sampled.
type datasetFlags struct {
	format      string
	tokenizer   string
	numPrompts  int
	minTokens   int
	maxPrompt   int
	maxContext  int
	repeat      bool
	blockTokens int
	speedup     float64
	liveHistory bool
}

func (f *datasetFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.format, "dataset-format", "auto", "auto, prompt, chat, sharegpt, single_turn, multi_turn or mooncake (see the README's formats table)")
	fs.StringVar(&f.tokenizer, "tokenizer", "", "the model's tokenizer: a tokenizer.json, a model folder, or a Hugging Face model id in the local cache; dataset lengths are then the model's own (default: estimated against the server's prompt_tokens)")
	fs.IntVar(&f.numPrompts, "num-prompts", 0, "sample this many dataset entries with --seed (default: as many as the run or sweep sends, or all)")
	fs.IntVar(&f.minTokens, "dataset-min-tokens", -1, "drop entries with fewer prompt (or reference answer) tokens (default 4 for ShareGPT, as vLLM; else none)")
	fs.IntVar(&f.maxPrompt, "dataset-max-prompt-tokens", -1, "drop entries with more prompt tokens (default 1024 for ShareGPT, as vLLM; else none)")
	fs.IntVar(&f.maxContext, "dataset-max-context", -1, "drop entries whose prompt plus output exceed this (default 2048 for ShareGPT, as vLLM; else none)")
	hideDefault(fs, "dataset-min-tokens", "dataset-max-prompt-tokens", "dataset-max-context")
	fs.BoolVar(&f.repeat, "dataset-repeat", false, "start every sweep level at the first sampled entry, so later levels resend earlier levels' prompts (warm on a prefix-caching server); by default each level continues where the last stopped")
	fs.IntVar(&f.blockTokens, "trace-block-tokens", workload.DefaultTraceBlockTokens, "tokens one trace hash_id stands for (Mooncake's block size)")
	fs.BoolVar(&f.liveHistory, "replay-live-history", false, "conversations: send the server's own answers as the history of later turns (default: the recorded answers)")
	if windowFlag(c) == "--duration" {
		// A sweep's levels are --trace-speedups.
		fs.Float64Var(&f.speedup, "trace-speedup", 1, "replay a trace this many times faster (0.5: at half speed); --rate instead asks for a mean rate")
	} else {
		f.speedup = 1
	}
}

// pendingDataset is a parsed dataset not yet sized: sizing needs the
// tokenizer or the server, so it happens once the target is known.
type pendingDataset struct {
	path    string
	parsed  *workload.ParsedDataset
	format  workload.DatasetFormat
	filters workload.Filters
	tok     *workload.HFTokenizer
	sample  int
	repeat  bool
	blocks  int
	// traceRate is the mean rate of a trace's lines at its own speed
	// (0: not a trace).
	traceRate   float64
	liveHistory bool
	// sizing is how size counted and chose the entries, for the result.
	sizing results.DatasetSizing
}

// Request implements workload.Source; a pending dataset is never sent.
func (p *pendingDataset) Request(int) workload.Request { panic("dataset used before sizing") }

// parse reads the file and checks the flags; errors are usage errors that
// name the line.
func (f *datasetFlags) parse(path string) (*pendingDataset, error) {
	known := false
	for _, k := range workload.Formats {
		known = known || string(k) == f.format
	}
	if !known {
		return nil, usageErr("--dataset-format %q: use auto, prompt, chat, sharegpt, single_turn, multi_turn or mooncake", f.format)
	}
	if f.numPrompts < 0 {
		return nil, usageErr("--num-prompts must not be negative")
	}
	if f.blockTokens < 1 || f.blockTokens > 1<<20 {
		return nil, usageErr("--trace-block-tokens must be between 1 and 1048576")
	}
	if !(f.speedup > 0) || f.speedup > 1e6 {
		return nil, usageErr("--trace-speedup must be a positive number up to 1000000")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, usageErr("--dataset %s is a folder, not a file", path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, usageErr("--dataset: %v", err)
	}
	defer fh.Close()
	parsed, err := workload.ParseDataset(fh, workload.DatasetFormat(f.format))
	if err != nil {
		return nil, usageErr("--dataset %s: %v", path, err)
	}
	p := &pendingDataset{path: path, parsed: parsed, format: parsed.Format, sample: f.numPrompts, repeat: f.repeat, blocks: f.blockTokens, liveHistory: f.liveHistory}
	if parsed.Timed {
		p.traceRate = workload.TraceRate(workload.TraceSchedule(parsed.Entries, 1))
		if !(p.traceRate > 0) || math.IsInf(p.traceRate, 0) {
			return nil, usageErr("--dataset %s: a trace needs at least two lines at different timestamps to have a rate", path)
		}
	}
	if parsed.Format == workload.FormatShareGPT {
		p.filters = workload.ShareGPTFilters
	}
	for _, b := range []struct {
		flag int
		dst  *int
	}{{f.minTokens, &p.filters.MinTokens}, {f.maxPrompt, &p.filters.MaxPromptTokens}, {f.maxContext, &p.filters.MaxContext}} {
		if b.flag >= 0 {
			*b.dst = b.flag
		}
	}
	if f.tokenizer != "" {
		if p.tok, err = workload.LoadTokenizer(f.tokenizer); err != nil {
			return nil, usageErr("--tokenizer: %v", err)
		}
	}
	return p, nil
}

// size counts, filters and samples the dataset once: with the tokenizer
// when given, else against the server's own prompt_tokens (probes fit a
// tokens-per-character ratio). need is how many entries the run or sweep
// will send (0: unknown, size them all). It returns the source and a line
// saying how the lengths were counted.
func (p *pendingDataset) size(client bench.Prober, defaultOutput, need int, seed uint64) (workload.Dataset, string, error) {
	var count workload.TokenCounter
	var how string
	entries := p.parsed.Entries
	if p.tok != nil {
		count, how = p.tok, "counted with the tokenizer "+p.tok.Path()
	} else {
		c, note := bench.CalibratedCounter(client, entries)
		count, how = c, note
	}
	n := p.sample
	if n == 0 {
		n = need
	}
	kept, sz := workload.Size(entries, count, p.filters, defaultOutput, n, seed)
	p.sizing = sizingOf(count, p.filters, len(kept), p.blocks)
	if len(kept) == 0 {
		return workload.Dataset{}, "", usageErr("--dataset %s: every one of its %d entries was filtered out by the length bounds (min %d, max prompt %d, max context %d tokens; 0 is no bound)",
			p.path, len(entries), p.filters.MinTokens, p.filters.MaxPromptTokens, p.filters.MaxContext)
	}
	order := fmt.Sprintf("sampled with seed %d", seed)
	if p.parsed.Timed {
		order = "in the trace's order"
	}
	note := fmt.Sprintf("dataset %s (%s): %s, %s; lengths %s", p.path, p.format, sz.Describe(len(entries), len(kept)), order, how)
	if p.parsed.LengthKey != "" {
		note += fmt.Sprintf("; output lengths from each line's %q, --max-tokens %d where a line has none", p.parsed.LengthKey, defaultOutput)
	} else if p.format != workload.FormatShareGPT {
		note += fmt.Sprintf("; no line gives an output length: every request asks for --max-tokens %d", defaultOutput)
	}
	ds := workload.Dataset{Entries: kept, DefaultMaxTokens: defaultOutput, Blocks: workload.TraceBlocks{BlockTokens: p.blocks, Seed: seed}}
	return ds, note, nil
}

// sizeConversations counts the recorded answers of every conversation
// (with the tokenizer, or against the server), so each replayed turn asks
// for the length the recording answered with, and orders them by the
// seed (a sample of --num-prompts when given).
func (p *pendingDataset) sizeConversations(client bench.Prober, defaultOutput int, seed uint64) (workload.Conversations, string) {
	var count workload.TokenCounter
	var how string
	if p.tok != nil {
		count, how = p.tok, "counted with the tokenizer "+p.tok.Path()
	} else {
		count, how = bench.CalibratedCounter(client, p.parsed.Entries)
	}
	convs := workload.PickConversations(p.parsed.Conversations, count, p.sample, seed)
	p.sizing = sizingOf(count, workload.Filters{}, len(convs), 0)
	turns := 0
	for _, c := range convs {
		turns += len(c.Turns)
	}
	history := "the recorded answers as history"
	if p.liveHistory {
		history = "the server's own answers as history"
	}
	note := fmt.Sprintf("conversations from %s (%s): %d conversations of %d turns in all, in an order drawn with seed %d; every turn measured, %s; answer lengths %s",
		p.path, p.format, len(convs), turns, seed, history, how)
	return workload.Conversations{Convs: convs, LiveHistory: p.liveHistory, DefaultMaxTokens: defaultOutput, Seed: seed}, note
}

// trackedCalls is a level's conversations that remember how many the
// level took, so the next level starts after them.
type trackedCalls struct {
	workload.Conversations
	top atomic.Int64
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
	case bench.CharCounter:
		s.Counter, s.CharsPerToken = "chars", 1/c.PerChar
	}
	return s
}

// checkCompletions refuses, before anything is sent, entries that would
// be an empty prompt on the completions endpoint (which joins the
// messages' contents): every such request would fail.
func (p *pendingDataset) checkCompletions() error {
	for _, e := range p.parsed.Entries {
		if e.InputLength > 0 {
			continue
		}
		if strings.TrimSpace((workload.Request{Messages: e.Messages}).Text()) == "" {
			return usageErr("--dataset %s: line %d has no text, which --endpoint completions would send as an empty prompt", p.path, e.Line)
		}
	}
	return nil
}

// lengthsOnly says whether some lines give a prompt's length and no text:
// their prompts are knee's filler, which is then calibrated.
func (p *pendingDataset) lengthsOnly() bool {
	for _, e := range p.parsed.Entries {
		if e.Messages == nil && e.InputLength > 0 {
			return true
		}
	}
	return false
}

// datasetNeed is how many entries a run or sweep sends, as far as can be
// told before it starts: levels times a count bound, or an open loop's
// rate over its window with a margin; 0 (every entry) when it cannot be
// told, as for a closed loop bounded by time.
func datasetNeed(load driver.Load, levels []float64, rateAxis bool) int {
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
	top atomic.Int64 // the highest request index taken, plus one
}

// Request implements workload.Source.
func (t *trackedDataset) Request(i int) workload.Request {
	for {
		top := t.top.Load()
		if int64(i) < top || t.top.CompareAndSwap(top, int64(i)+1) {
			break
		}
	}
	return t.Dataset.Request(i)
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

// lengthFlags spread synthetic prompt and output lengths.
type lengthFlags struct {
	inputStddev, outputStddev, rangeRatio float64
}

func (f *lengthFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.Float64Var(&f.inputStddev, "input-tokens-stddev", 0, "synthetic prompts: standard deviation of the input length (normal, seeded, clipped at 1)")
	fs.Float64Var(&f.outputStddev, "max-tokens-stddev", 0, "synthetic prompts: standard deviation of max_tokens (normal, seeded, clipped at 1)")
	fs.Float64Var(&f.rangeRatio, "range-ratio", 0, "synthetic prompts: lengths uniform in [N(1−R), N(1+R)] for input and output, as vLLM's random dataset (0 ≤ R < 1)")
}

// apply sets the spread on syn after checking the flags.
func (f *lengthFlags) apply(syn *workload.Synthetic) error {
	if f.inputStddev < 0 || f.outputStddev < 0 || f.rangeRatio < 0 || f.rangeRatio >= 1 {
		return usageErr("--input-tokens-stddev and --max-tokens-stddev must not be negative, --range-ratio must be in [0, 1)")
	}
	if f.rangeRatio > 0 && (f.inputStddev > 0 || f.outputStddev > 0) {
		return usageErr("give --range-ratio or the standard deviations, not both")
	}
	syn.Spread = workload.Spread{InputStddev: f.inputStddev, OutputStddev: f.outputStddev, RangeRatio: f.rangeRatio}
	return nil
}
