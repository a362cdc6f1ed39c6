package cmd

import (
	"math"
	"os"

	"github.com/kneebench/knee/bench"
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

// parse reads the file and checks the flags; errors are usage errors that
// name the line.
func (f *datasetFlags) parse(path string) (*bench.DatasetFile, error) {
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
	p := &bench.DatasetFile{Path: path, Parsed: parsed, Sample: f.numPrompts, Repeat: f.repeat, BlockTokens: f.blockTokens, LiveHistory: f.liveHistory}
	if rate := p.TraceRate(); parsed.Timed && (!(rate > 0) || math.IsInf(rate, 0)) {
		return nil, usageErr("--dataset %s: a trace needs at least two lines at different timestamps to have a rate", path)
	}
	if parsed.Format == workload.FormatShareGPT {
		p.Filters = workload.ShareGPTFilters
	}
	for _, b := range []struct {
		flag int
		dst  *int
	}{{f.minTokens, &p.Filters.MinTokens}, {f.maxPrompt, &p.Filters.MaxPromptTokens}, {f.maxContext, &p.Filters.MaxContext}} {
		if b.flag >= 0 {
			*b.dst = b.flag
		}
	}
	if f.tokenizer != "" {
		if p.Tokenizer, err = workload.LoadTokenizer(f.tokenizer); err != nil {
			return nil, usageErr("--tokenizer: %v", err)
		}
	}
	return p, nil
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
