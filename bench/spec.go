package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// Spec is what a run, sweep, prediction or plan sends and how much, as
// knee's load and workload flags give it: each field is the flag of its
// name, and every error names the flags at fault. Series checks it, fills
// in what the flags leave to defaults, and prepares the levels.
type Spec struct {
	// Given reports whether a flag was given on the command line (its name
	// without dashes): a zero given on purpose is an error, not a request
	// for the default. Nil means none was.
	Given func(flag string) bool
	// Workload is requests, voice or conversations.
	Workload string
	// Endpoint is the target's (--endpoint): one that sends the prompt as
	// text refuses a dataset whose entries would send an empty one.
	Endpoint kind.Name
	// BatchSize is --batch-size: an embeddings request's inputs (0:
	// one); Documents is --documents: a rerank request's.
	BatchSize, Documents int
	// Images is the --image-* flags: ImageCount images a request
	// (0: none) of ImageSizes (WxH, comma-separated) as ImageFormat at
	// ImageQuality, ImagePool of them reused (0: all differ).
	ImageCount, ImageQuality, ImagePool int
	ImageSizes, ImageFormat             string
	// ImageURLBase is --image-url-base and ImageServe --image-serve:
	// images sent as URLs under a base the target fetches from, served
	// by knee itself on ImageServe's address (see imageLinks).
	ImageURLBase, ImageServe string
	// Mix is --mix: a file of request classes sent in one load; Vary is
	// --vary, the class a sweep raises while the others keep their rates.
	Mix, Vary string
	// MixData, when set, is the mix itself (a load file's mix:), which
	// Mix then only names.
	MixData []byte
	// VirtualImages makes synthetic images headers without pixels (see
	// workload.Images.Virtual): a prediction's, in virtual time.
	VirtualImages  bool
	serve          *imageServer
	serveBase      string
	Concurrency    int
	Rate           float64
	Burstiness     float64
	MaxConcurrency int
	Requests       int
	Duration       time.Duration
	Warmup         int
	Seed           uint64
	InputTokens    int
	Prompt         string
	MaxTokens      int
	Drain          time.Duration
	NoCalibrate    bool
	PrefixTokens   int
	PrefixPool     int
	Goodput        string
	// Slice is the width of a level's time slices (0: none kept).
	Slice time.Duration
	// RampUp, RampUpStrategy and RampUpFrom are --ramp-up and its shape:
	// each level's rate rises over RampUp before its window (see
	// workload.Ramp; RampUpFrom counts only when given).
	RampUp         time.Duration
	RampUpStrategy string
	RampUpFrom     float64
	// InputStddev, OutputStddev and RangeRatio spread synthetic lengths.
	InputStddev, OutputStddev, RangeRatio float64
	Data                                  DatasetSpec
	Voice                                 VoiceSpec
}

// given is Given, false where it is nil.
func (sp *Spec) given(flag string) bool { return sp.Given != nil && sp.Given(flag) }

// Bounds past which a size is a typo rather than a workload.
const (
	maxTokensBound = 10_000_000
	maxCountBound  = 1_000_000_000
	maxRateBound   = 1_000_000
	// MinBurstiness is the burstiest gamma shape knee draws: at 0.01 a 5 s
	// window at 2/s holds at most about 120 arrivals in 50 seeds (12 times
	// the 10 asked), at 0.001 about 830, and below that the sampler
	// underflows to gaps of zero.
	MinBurstiness = 0.01
)

// Workloads are the kinds of work a spec may name.
var Workloads = []string{"requests", "voice", "conversations"}

// CheckWorkload checks --workload.
func CheckWorkload(w string) error {
	if !containsString(Workloads, w) {
		return fmt.Errorf("--workload must be requests, voice or conversations, got %q", w)
	}
	return nil
}

// Prepared is a spec's series, with what its commands read of it.
type Prepared struct {
	Series *Series
	// Calls says the levels send calls (voice, or a dataset's
	// conversations); Conversations that they are a dataset's.
	Calls, Conversations bool
	// Load is every level's load (a level of calls takes its window,
	// seed, drain and shard).
	Load driver.Load
}

// SetLoad sets every level's load.
func (p *Prepared) SetLoad(l driver.Load) { p.Load, p.Series.Load = l, l }

// SingleDataset is the levels' dataset file of single requests, if they
// send one.
func (p *Prepared) SingleDataset() *DatasetFile {
	if p.Conversations {
		return nil
	}
	return p.Series.Workload.Dataset
}

// Series checks the spec and prepares its series, every level's prompts
// opening with nonce; cancelling ctx ends a wait on an input FIFO. It fills the defaults the flags leave: the rate of a
// trace, a closed loop of one when neither rate nor concurrency is given,
// 100 requests when no window is, 20 calls when neither calls nor a
// window are.
func (sp *Spec) Series(ctx context.Context, nonce string) (*Prepared, error) {
	if err := CheckWorkload(sp.Workload); err != nil {
		return nil, err
	}
	g, err := summary.ParseGoodput(sp.Goodput)
	if err != nil {
		return nil, fmt.Errorf("--goodput: %w", err)
	}
	if sp.Slice < 0 || sp.Slice > 0 && sp.Slice < 100*time.Millisecond || sp.Slice > time.Hour || sp.Slice%(100*time.Millisecond) != 0 {
		return nil, fmt.Errorf("--slice %s: 0 (none), or a multiple of 100ms up to 1h", sp.Slice)
	}
	p := &Prepared{Series: &Series{Goodput: g, Nonce: nonce, Slice: sp.Slice}, Calls: sp.Workload != "requests"}
	var conv *DatasetFile
	if sp.Workload == "requests" && sp.Data.Path != "" {
		// AIPerf's multi_turn files are sessions: replay them as such,
		// every turn, or refuse to send their first turns alone.
		if pd, err := sp.readDataset(ctx); err == nil && pd.Parsed.Sessions {
			if sp.given("workload") {
				return nil, fmt.Errorf("--dataset %s holds sessions (%s): they replay as conversations, every turn (--workload conversations, or no --workload), not as single requests that would send only each session's first turn", sp.Data.Path, pd.Format())
			}
			p.Calls, conv = true, pd
		}
	}
	if sp.Endpoint.Kind().Pooled() && (p.Calls || sp.Workload != "requests") {
		return nil, fmt.Errorf("--endpoint %s answers single requests, not calls (a voice workload, a dataset's conversations or sessions)", sp.Endpoint)
	}
	if sp.Workload == "conversations" {
		if conv, err = sp.conversations(ctx); err != nil {
			return nil, err
		}
	}
	if !p.Calls {
		load, w, err := sp.build(ctx)
		if err != nil {
			return nil, err
		}
		if w.Dataset != nil && sp.Endpoint.Kind().Input == kind.Text {
			if err := w.Dataset.CheckText(sp.Endpoint); err != nil {
				return nil, fmt.Errorf("--dataset %w", err)
			}
		}
		p.Series.Workload = w
		p.SetLoad(load)
		return p, nil
	}
	w, err := sp.calls(conv)
	if err != nil {
		return nil, err
	}
	p.Conversations = conv != nil
	p.Series.Workload = w
	p.SetLoad(driver.Load{Rate: sp.Rate, Concurrency: sp.Concurrency, Duration: sp.Duration, Seed: sp.Seed, Burstiness: 1, DrainTimeout: sp.Drain})
	return p, nil
}

// conversations reads the dataset whose conversations --workload
// conversations replays.
func (sp *Spec) conversations(ctx context.Context) (*DatasetFile, error) {
	if sp.Data.Path == "" {
		return nil, errors.New("--workload conversations replays a --dataset's conversations (ShareGPT, chat or multi_turn): give --dataset")
	}
	pd, err := sp.readDataset(ctx)
	if err != nil {
		return nil, err
	}
	if len(pd.Parsed.Conversations) == 0 {
		return nil, fmt.Errorf("--dataset %s (%s) holds no conversations to replay (ShareGPT, chat and multi_turn files do)", sp.Data.Path, pd.Format())
	}
	return pd, nil
}

// calls is the workload of a level of calls: the voice workload's, or
// conv's conversations.
func (sp *Spec) calls(conv *DatasetFile) (Workload, error) {
	if sp.RampUp > 0 {
		return Workload{}, errors.New("--ramp-up raises the arrival rate of single requests; calls (a voice workload, conversations) arrive at their rate from the start")
	}
	if sp.Concurrency > 0 {
		// A session dataset runs closed loop as AIPerf and GuideLLM run
		// one: each slot holds a session, its turns in order.
		switch {
		case conv == nil:
			return Workload{}, errors.New("the voice workload is open loop: give --rate (calls per second), not --concurrency")
		case sp.Voice.MaxCalls > 0:
			return Workload{}, errors.New("--max-concurrent-calls caps an open loop's conversations (--rate); --concurrency already holds that many at once")
		}
	}
	if err := sp.check(); err != nil {
		return Workload{}, err
	}
	if conv == nil && sp.Data.Tokenizer != "" {
		return Workload{}, errUnusedTokenizer
	}
	v, err := sp.Voice.Build(sp.Seed)
	if err != nil && conv == nil {
		return Workload{}, err
	}
	if sp.Voice.Calls == 0 && sp.Duration == 0 {
		sp.Voice.Calls = 20
	}
	w := Workload{MaxTokens: sp.MaxTokens, Calls: sp.Voice.Calls, MaxConcurrentCalls: sp.Voice.MaxCalls}
	if conv != nil {
		w.Dataset, w.Conversations = conv, true
		w.GapMin, w.GapMax, _ = ParseGap(sp.Voice.Gap)
	} else {
		w.Voice = &v
	}
	return w, nil
}

// build checks a load of single requests and returns it and what it
// sends.
func (sp *Spec) build(ctx context.Context) (driver.Load, Workload, error) {
	w := Workload{MaxTokens: sp.MaxTokens, NoCalibrate: sp.NoCalibrate, Batch: sp.BatchSize, Pairs: sp.Endpoint.Kind().Input == kind.Pairs}
	if sp.Documents > 0 {
		// The query, then the documents.
		w.Batch = sp.Documents + 1
	}
	if err := sp.check(); err != nil {
		return driver.Load{}, w, err
	}
	if err := sp.checkBatch(); err != nil {
		return driver.Load{}, w, err
	}
	images, err := sp.images(ctx)
	if err != nil {
		return driver.Load{}, w, err
	}
	w.Images = images
	w.imageServer = sp.serve
	// A dataset is read first: a trace sets the arrivals itself.
	var pending *DatasetFile
	if sp.Data.Path != "" {
		if pending, err = sp.readDataset(ctx); err != nil {
			return driver.Load{}, w, err
		}
		if rate := pending.TraceRate(); rate > 0 {
			if sp.Concurrency > 0 {
				return driver.Load{}, w, fmt.Errorf("--dataset %s is a trace: its timestamps are the arrivals, so --concurrency does not apply (--max-concurrency caps requests in flight)", sp.Data.Path)
			}
			if sp.Rate == 0 {
				sp.Rate = rate * sp.Data.Speedup
			}
			if !sp.given("requests") {
				sp.Requests = 0
			}
		}
	}
	if sp.Concurrency == 0 && sp.Rate == 0 {
		sp.Concurrency = 1
	}
	if !(sp.Burstiness >= MinBurstiness && sp.Burstiness <= 1e6) {
		// Below this the gamma draws gaps of zero: at 1e-6, 131,998/s were
		// offered for 2/s asked.
		return driver.Load{}, w, fmt.Errorf("--burstiness must be between %g (very bursty) and 1000000 (all but constant), got %g", MinBurstiness, sp.Burstiness)
	}
	if sp.MaxConcurrency > 0 && sp.Concurrency > 0 {
		return driver.Load{}, w, errors.New("--max-concurrency applies to open loop (--rate); closed loop is already capped by --concurrency")
	}
	if sp.Requests == 0 && sp.Duration == 0 && (pending == nil || pending.TraceRate() == 0) {
		sp.Requests = 100
	}
	load := driver.Load{
		Concurrency: sp.Concurrency, Rate: sp.Rate, Burstiness: sp.Burstiness, MaxConcurrency: sp.MaxConcurrency,
		Requests: sp.Requests, Duration: sp.Duration, Warmup: sp.Warmup, Seed: sp.Seed, DrainTimeout: sp.Drain,
	}
	if err = sp.source(ctx, &w, pending, &load); err != nil {
		return load, w, err
	}
	return load, w, sp.ramp(&load)
}

// source sets what the requests send: the dataset (a trace's schedule
// left to be drawn level by level), synthetic prompts, or the fixed
// prompt.
func (sp *Spec) source(ctx context.Context, w *Workload, pending *DatasetFile, load *driver.Load) error {
	if sp.PrefixTokens < 0 || sp.PrefixTokens > 10_000_000 || sp.PrefixPool < 1 || sp.PrefixPool > 1_000_000 {
		return errors.New("--prefix-tokens must be in 0..10000000 and --prefix-pool in 1..1000000")
	}
	if sp.PrefixTokens > 0 && sp.InputTokens == 0 {
		return errors.New("--prefix-tokens shares a prefix among synthetic prompts: give --input-tokens too (the tokens of each request's own)")
	}
	if sp.given("prefix-pool") && sp.PrefixTokens == 0 {
		return errors.New("--prefix-pool needs --prefix-tokens")
	}
	switch {
	case sp.Mix != "":
		m, err := sp.readMix(ctx, load)
		if err != nil {
			return err
		}
		w.Mix = m
	case pending != nil:
		if pending.TraceRate() > 0 {
			// The schedule comes from the sized lines, level by level.
			load.Trace = []time.Duration{}
		}
		w.Dataset = pending
	case sp.InputTokens > 0:
		syn := workload.Synthetic{Tokens: sp.InputTokens, MaxTokens: sp.MaxTokens, Seed: sp.Seed}
		if err := sp.spread(&syn); err != nil {
			return err
		}
		if sp.PrefixTokens > 0 {
			syn.Prefix = workload.Pool{Tokens: sp.PrefixTokens, Count: sp.PrefixPool}
		}
		w.Source, w.WantTokens = syn, sp.InputTokens+sp.PrefixTokens
		if sp.Data.Tokenizer != "" {
			tok, err := workload.LoadTokenizer(ctx, sp.Data.Tokenizer)
			if err != nil {
				return fmt.Errorf("--tokenizer: %w", err)
			}
			w.Tokenizer = tok
		}
	default:
		if sp.Data.Tokenizer != "" {
			return errUnusedTokenizer
		}
		if strings.TrimSpace(sp.Prompt) == "" {
			return errors.New("--prompt must not be empty")
		}
		w.Source = workload.FixedPrompt{Text: sp.Prompt, MaxTokens: sp.MaxTokens}
	}
	return nil
}

// spread sets the spread of synthetic lengths on syn after checking it.
func (sp *Spec) spread(syn *workload.Synthetic) error {
	if sp.InputStddev < 0 || sp.OutputStddev < 0 || sp.RangeRatio < 0 || sp.RangeRatio >= 1 {
		return errors.New("--input-tokens-stddev and --max-tokens-stddev must not be negative, --range-ratio must be in [0, 1)")
	}
	if sp.InputStddev > maxTokensBound || sp.OutputStddev > maxTokensBound {
		return fmt.Errorf("--input-tokens-stddev and --max-tokens-stddev must be at most %d", maxTokensBound)
	}
	if sp.RangeRatio > 0 && (sp.InputStddev > 0 || sp.OutputStddev > 0) {
		return errors.New("give --range-ratio or the standard deviations, not both")
	}
	syn.Spread = workload.Spread{InputStddev: sp.InputStddev, OutputStddev: sp.OutputStddev, RangeRatio: sp.RangeRatio}
	return nil
}

// errUnusedTokenizer refuses a --tokenizer nothing would use, rather than
// let it seem to size what it does not.
var errUnusedTokenizer = errors.New("--tokenizer sizes --input-tokens prompts and a --dataset's entries: give one of them (a fixed --prompt and the voice workload's turns are not sized by it)")

// Longest is the longest request the spec asks for, in tokens, and what
// it is, or 0 when it does not say (a fixed prompt, a dataset).
func (sp *Spec) Longest() (int, string) {
	switch {
	case sp.Workload == "voice":
		v := sp.Voice
		n := v.SystemTokens + v.Turns*(v.UserTokens+v.OutputTokens)
		return n, fmt.Sprintf("a call's last turn (--system-prompt-tokens %d + --turns %d × (--user-tokens %d + --output-tokens %d))",
			v.SystemTokens, v.Turns, v.UserTokens, v.OutputTokens)
	case sp.InputTokens > 0 && sp.Data.Path == "":
		return sp.PrefixTokens + sp.InputTokens + sp.MaxTokens, fmt.Sprintf("a request (--prefix-tokens %d + --input-tokens %d + --max-tokens %d)",
			sp.PrefixTokens, sp.InputTokens, sp.MaxTokens)
	}
	return 0, ""
}

// Inputs are the files the spec reads, by flag.
func (sp *Spec) Inputs() map[string]string {
	return map[string]string{"--dataset": sp.Data.Path, "--tokenizer": sp.Data.Tokenizer, "--mix": sp.Mix}
}

// containsString reports whether list holds s.
func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
