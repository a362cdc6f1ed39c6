package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/workload"
)

// DatasetSpec says how a --dataset file is read, sized and sampled, as
// the dataset flags give it.
type DatasetSpec struct {
	// Path is --dataset; Format --dataset-format; Tokenizer --tokenizer.
	Path, Format, Tokenizer string
	// NumPrompts is --num-prompts; MinTokens, MaxPrompt and MaxContext
	// the --dataset-* length bounds (-1: the format's usual).
	NumPrompts, MinTokens, MaxPrompt, MaxContext int
	Repeat                                       bool
	// BlockTokens is --trace-block-tokens, Speedup --trace-speedup.
	BlockTokens int
	Speedup     float64
	LiveHistory bool
	// ImageDir is --image-dir: where the file's relative image paths are
	// read from ("": the dataset's own folder).
	ImageDir string
	// urlBase and serve are the spec's image links (Spec.imageLinks):
	// the dataset's local images are sent as URLs under urlBase, served
	// by serve when knee serves them.
	urlBase string
	serve   *imageServer
}

// MaxDatasetBytes bounds a dataset file: ShareGPT's is 650 MB, and the
// largest of the peers' traces a few hundred.
const MaxDatasetBytes = 4 << 30

// Read reads the file and checks the flags; errors name the flag, and
// the line where the file is at fault. Cancelling ctx ends a wait on a
// FIFO.
func (d DatasetSpec) Read(ctx context.Context) (*DatasetFile, error) {
	known := false
	for _, k := range workload.Formats {
		known = known || string(k) == d.Format
	}
	if !known {
		return nil, fmt.Errorf("--dataset-format %q: use auto, prompt, chat, sharegpt, single_turn, multi_turn or mooncake", d.Format)
	}
	if d.NumPrompts < 0 {
		return nil, errors.New("--num-prompts must not be negative")
	}
	if d.BlockTokens < 1 || d.BlockTokens > 1<<20 {
		return nil, errors.New("--trace-block-tokens must be between 1 and 1048576")
	}
	if err := outside("--trace-speedup", d.Speedup, MinSpeedup, MaxSpeedup, "times the trace's speed"); err != nil {
		return nil, err
	}
	fh, err := input.Open(ctx, d.Path, MaxDatasetBytes, "a dataset")
	if err != nil {
		return nil, fmt.Errorf("--dataset: %w", err)
	}
	defer fh.Close()
	parsed, err := workload.ParseDataset(fh, workload.DatasetFormat(d.Format))
	if err != nil {
		return nil, fmt.Errorf("--dataset %s: %w", d.Path, err)
	}
	p := &DatasetFile{Path: d.Path, Parsed: parsed, Sample: d.NumPrompts, Repeat: d.Repeat, BlockTokens: d.BlockTokens, LiveHistory: d.LiveHistory}
	if rate := p.TraceRate(); parsed.Timed && (!(rate > 0) || math.IsInf(rate, 0)) {
		return nil, fmt.Errorf("--dataset %s: a trace needs at least two lines at different timestamps to have a rate", d.Path)
	}
	if parsed.Format == workload.FormatShareGPT {
		p.Filters = workload.ShareGPTFilters
	}
	for _, b := range []struct {
		flag int
		dst  *int
	}{{d.MinTokens, &p.Filters.MinTokens}, {d.MaxPrompt, &p.Filters.MaxPromptTokens}, {d.MaxContext, &p.Filters.MaxContext}} {
		if b.flag >= 0 {
			*b.dst = b.flag
		}
	}
	if parsed.HasImages() {
		dir := d.ImageDir
		if dir == "" {
			dir = filepath.Dir(d.Path)
		}
		if p.images, err = resolveImages(ctx, parsed, dir, d.urlBase, d.serve); err != nil {
			return nil, fmt.Errorf("--dataset %s: %w", d.Path, err)
		}
	} else if d.ImageDir != "" {
		return nil, fmt.Errorf("--image-dir: the dataset %s names no images", d.Path)
	}
	if d.Tokenizer != "" {
		if p.Tokenizer, err = workload.LoadTokenizer(ctx, d.Tokenizer); err != nil {
			return nil, fmt.Errorf("--tokenizer: %w", err)
		}
	}
	return p, nil
}

// VoiceSpec is the multi-turn call workload's knobs, as the voice flags
// give them.
type VoiceSpec struct {
	// SystemTokens is --system-prompt-tokens, UserTokens --user-tokens,
	// OutputTokens --output-tokens; Gap is --gap (MIN,MAX or one value).
	SystemTokens, UserTokens, Turns, OutputTokens int
	Gap                                           string
	// Calls is --calls, MaxCalls --max-concurrent-calls.
	Calls, MaxCalls int
}

// Build returns the voice workload, checked.
func (v VoiceSpec) Build(seed uint64) (workload.Voice, error) {
	lo, hi, err := ParseGap(v.Gap)
	if err != nil {
		return workload.Voice{}, err
	}
	if v.Calls < 0 || v.MaxCalls < 0 {
		return workload.Voice{}, errors.New("--calls and --max-concurrent-calls must not be negative")
	}
	w := workload.Voice{SystemPromptTokens: v.SystemTokens, UserTokens: v.UserTokens, Turns: v.Turns,
		GapMin: lo, GapMax: hi, OutputTokens: v.OutputTokens, Seed: seed}
	return w, w.Validate()
}

// ParseGap reads --gap: "5s,7s" or "6s".
func ParseGap(s string) (time.Duration, time.Duration, error) {
	lo, hi, two := strings.Cut(s, ",")
	a, err := time.ParseDuration(strings.TrimSpace(lo))
	if err != nil {
		return 0, 0, fmt.Errorf("--gap %q: %v", s, err)
	}
	b := a
	if two {
		if b, err = time.ParseDuration(strings.TrimSpace(hi)); err != nil {
			return 0, 0, fmt.Errorf("--gap %q: %v", s, err)
		}
	}
	if a < 0 || b < a {
		return 0, 0, fmt.Errorf("--gap %q: want 0 ≤ MIN ≤ MAX", s)
	}
	return a, b, nil
}
