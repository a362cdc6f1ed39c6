package cmd

import (
	"fmt"
	"os"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/workload"
	"github.com/spf13/cobra"
)

// datasetFlags say how a --dataset file is read, sized and sampled.
type datasetFlags struct {
	format     string
	tokenizer  string
	numPrompts int
	minTokens  int
	maxPrompt  int
	maxContext int
}

func (f *datasetFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.format, "dataset-format", "auto", "auto, prompt ({\"prompt\", \"max_tokens\"} JSONL), chat ({\"messages\", \"max_tokens\"} JSONL) or sharegpt (JSON)")
	fs.StringVar(&f.tokenizer, "tokenizer", "", "a Hugging Face tokenizer.json: dataset lengths in the model's own tokens (default: calibrated against the server's prompt_tokens)")
	fs.IntVar(&f.numPrompts, "num-prompts", 0, "sample this many dataset entries with --seed (default: --requests, or all)")
	fs.IntVar(&f.minTokens, "dataset-min-tokens", -1, "drop entries with fewer prompt (or reference answer) tokens (default 4 for ShareGPT, as vLLM; else none)")
	fs.IntVar(&f.maxPrompt, "dataset-max-prompt-tokens", -1, "drop entries with more prompt tokens (default 1024 for ShareGPT, as vLLM; else none)")
	fs.IntVar(&f.maxContext, "dataset-max-context", -1, "drop entries whose prompt plus output exceed this (default 2048 for ShareGPT, as vLLM; else none)")
}

// pendingDataset is a parsed dataset not yet sized: sizing needs the
// tokenizer or the server, so it happens once the target is known.
type pendingDataset struct {
	path    string
	entries []workload.DatasetEntry
	format  workload.DatasetFormat
	filters workload.Filters
	tok     *workload.HFTokenizer
	sample  int
}

// Request implements workload.Source; a pending dataset is never sent.
func (p *pendingDataset) Request(int) workload.Request { panic("dataset used before sizing") }

// parse reads the file and checks the flags; errors are usage errors that
// name the line.
func (f *datasetFlags) parse(path string) (*pendingDataset, error) {
	switch workload.DatasetFormat(f.format) {
	case workload.FormatAuto, workload.FormatPrompt, workload.FormatChat, workload.FormatShareGPT:
	default:
		return nil, usageErr("--dataset-format %q: use auto, prompt, chat or sharegpt", f.format)
	}
	if f.numPrompts < 0 {
		return nil, usageErr("--num-prompts must not be negative")
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, usageErr("--dataset: %v", err)
	}
	defer fh.Close()
	entries, format, err := workload.ParseDataset(fh, workload.DatasetFormat(f.format))
	if err != nil {
		return nil, usageErr("--dataset %s: %v", path, err)
	}
	p := &pendingDataset{path: path, entries: entries, format: format, sample: f.numPrompts}
	if format == workload.FormatShareGPT {
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
// when given, else against the server's own prompt_tokens (a probe of a
// few entries fits a tokens-per-character ratio). It returns the source
// and a line saying how the lengths were counted.
func (p *pendingDataset) size(client bench.Prober, defaultOutput, requests int, seed uint64) (workload.Dataset, string, error) {
	var count workload.TokenCounter
	var how string
	if p.tok != nil {
		count, how = p.tok, "counted with the tokenizer "+p.tok.Path()
	} else {
		c, note := bench.CalibratedCounter(client, p.entries)
		count, how = c, note
	}
	kept, dropped := workload.Size(p.entries, count, p.filters, defaultOutput)
	if len(kept) == 0 {
		return workload.Dataset{}, "", usageErr("--dataset %s: every one of its %d entries was filtered out by the length bounds (min %d, max prompt %d, max context %d tokens; 0 is no bound)",
			p.path, len(p.entries), p.filters.MinTokens, p.filters.MaxPromptTokens, p.filters.MaxContext)
	}
	n := p.sample
	if n == 0 {
		n = requests
	}
	sampled := workload.Sample(kept, n, seed)
	note := fmt.Sprintf("dataset %s (%s): %d entries, %d dropped by the length bounds, %d sampled with seed %d; lengths %s",
		p.path, p.format, len(p.entries), dropped, len(sampled), seed, how)
	return workload.Dataset{Entries: sampled, DefaultMaxTokens: defaultOutput}, note, nil
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
