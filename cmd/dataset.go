package cmd

import (
	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/workload"
	"github.com/spf13/cobra"
)

// registerDataset declares the flags that say how a --dataset file is
// read, sized and sampled.
func registerDataset(c *cobra.Command, d *bench.DatasetSpec) {
	fs := c.Flags()
	fs.StringVar(&d.Format, "dataset-format", "auto", "auto, prompt, chat, sharegpt, single_turn, multi_turn or mooncake (see docs/workloads.md for each format)")
	fs.StringVar(&d.Tokenizer, "tokenizer", "", "the model's tokenizer: a tokenizer.json, a model folder, or a Hugging Face model id in the local cache; dataset lengths are then the model's own (default: estimated against the server's prompt_tokens)")
	fs.IntVar(&d.NumPrompts, "num-prompts", 0, "sample this many dataset entries with --seed (default: as many as the run or sweep sends, or all)")
	fs.IntVar(&d.MinTokens, "dataset-min-tokens", -1, "drop entries with fewer prompt (or reference answer) tokens (default 4 for ShareGPT, as vLLM; else none)")
	fs.IntVar(&d.MaxPrompt, "dataset-max-prompt-tokens", -1, "drop entries with more prompt tokens (default 1024 for ShareGPT, as vLLM; else none)")
	fs.IntVar(&d.MaxContext, "dataset-max-context", -1, "drop entries whose prompt plus output exceed this (default 2048 for ShareGPT, as vLLM; else none)")
	hideDefault(fs, "dataset-min-tokens", "dataset-max-prompt-tokens", "dataset-max-context")
	fs.BoolVar(&d.Repeat, "dataset-repeat", false, "start every sweep level at the first sampled entry, so later levels resend earlier levels' prompts (warm on a prefix-caching server); by default each level continues where the last stopped")
	fs.IntVar(&d.BlockTokens, "trace-block-tokens", workload.DefaultTraceBlockTokens, "tokens one trace hash_id stands for (Mooncake's block size)")
	fs.BoolVar(&d.LiveHistory, "replay-live-history", false, "conversations: send the server's own answers as the history of later turns (default: the recorded answers)")
	fs.StringVar(&d.ImageDir, "image-dir", "", "the folder a dataset's relative image paths are read from (LLaVA's, ShareGPT-4V's \"image\"; default: the dataset's own folder)")
	markInputs(c, "tokenizer")
	if windowKind(c) == "run" {
		// A sweep's levels are --trace-speedups.
		fs.Float64Var(&d.Speedup, "trace-speedup", 1, "replay a trace this many times faster (0.5: at half speed); --rate instead asks for a mean rate")
	} else {
		d.Speedup = 1
	}
}
