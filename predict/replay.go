package predict

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/simulator/model"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// replayDrain is the drain timeout of a replayed level: knee's default, as
// a result file does not record the one used.
const replayDrain = time.Minute

// minReplayRequests is the fewest finished requests a measured level needs
// to take part in a calibration: fewer give percentiles of a handful.
const minReplayRequests = 10

// Replayed is a measured level rebuilt for virtual time: requests or
// calls, with the target they were rebuilt for.
type Replayed struct {
	Level  *bench.Level
	target Target
	// memo keeps what the content side said of each request, as the
	// level is replayed once per step of a search.
	memo *Memo
}

// Run replays the level on the models file given (the target's own, or a
// tuning of it); cancelling ctx stops it.
func (r Replayed) Run(ctx context.Context, models *model.ModelsFile) (*results.Run, error) {
	t := r.target
	t.Models = models
	// Replayed once per step of a search: say each request once, and skip
	// the histograms nobody writes.
	v := &Virtual{Target: t, Memo: r.memo, NoHistograms: true}
	return v.Run(ctx, r.Level)
}

// Replay rebuilds the workload of a measured level for the target: the
// same load, window, warm-up and seed, and synthetic prompts and answers
// of the lengths the server reported (mean and spread, counted by the
// target's tokenizer as the measured server counted them with its own),
// or the same calls. It returns the replay and a note on what could not be
// reproduced, or an error saying why the level cannot be replayed.
func Replay(t Target, run *results.Run, nonce string) (Replayed, string, error) {
	c := run.Config
	var work bench.Work
	var note string
	var err error
	switch {
	case c.Workload == results.WorkloadVoice || c.Voice != nil:
		work, err = replayCalls(t, run, nonce)
	case c.Conversations != nil:
		work, err = replayConversations(c)
		note = "the conversations are replayed with their recorded text, which the target counts with its own tokenizer"
	default:
		t.Endpoint = kind.Name(c.Endpoint)
		work, note, err = replayRequests(t, run, nonce)
	}
	if err != nil {
		return Replayed{}, note, err
	}
	return Replayed{Level: &bench.Level{Work: work, Config: c}, target: t, memo: &Memo{}}, note, nil
}

// replayCalls rebuilds a level of the call workload: the same calls, turn
// for turn, with the filler scaled to the target's tokenizer.
func replayCalls(t Target, run *results.Run, nonce string) (bench.Work, error) {
	v, load, err := bench.ReplayVoice(run.Config, nonce, replayDrain)
	if err != nil {
		return nil, err
	}
	if !t.kind().Chat() {
		t.Endpoint = kind.Default
	}
	v.WordsPerToken = bench.Calibrate(t).WordsPerToken
	return bench.Calls{Source: v, Load: load}, nil
}

// replayRequests rebuilds a level of requests.
func replayRequests(t Target, run *results.Run, nonce string) (bench.Work, string, error) {
	c := run.Config
	load, err := bench.ReplayLoad(c, replayDrain)
	if err != nil {
		return nil, "", err
	}
	in, out := run.Tokens.Input, run.Tokens.Output
	if !run.Tokens.UsageReported || in.Count == 0 || in.Mean < 1 || out.Mean < 1 {
		return nil, "", fmt.Errorf("the server reported no token counts, so the lengths to replay are unknown")
	}
	for name, v := range map[string]float64{"input_per_request.mean": in.Mean, "output_per_request.mean": out.Mean,
		"input_per_request.stddev": in.Stddev, "output_per_request.stddev": out.Stddev} {
		if !(v >= 0 && v <= workload.MaxOutputTokens) {
			return nil, "", fmt.Errorf("%s is %v tokens: not a length a request has", name, v)
		}
	}
	if load.Requests > 1_000_000 || load.Duration > 24*time.Hour || load.Concurrency > 100_000 || load.Rate > 1e6 {
		return nil, "", fmt.Errorf("the level (%d requests, %s, concurrency %d, rate %g) is past what a replay holds", load.Requests, load.Duration, load.Concurrency, load.Rate)
	}
	var notes []string
	if c.DatasetSizing != nil && c.Dataset != "" {
		work, err := replayDataset(t, c, load, nonce)
		if err == nil {
			return work, "", nil
		}
		notes = append(notes, fmt.Sprintf("the dataset could not be read again (%v)", err))
	}
	syn := workload.Synthetic{Tokens: int(math.Round(in.Mean)), MaxTokens: int(math.Round(out.Mean)), Seed: c.Seed, Nonce: nonce,
		Spread: workload.Spread{InputStddev: in.Stddev, OutputStddev: out.Stddev}}
	switch {
	case c.Workload == results.WorkloadSynthetic && c.InputTokens > 0:
		syn = sameDraws(c, run, nonce)
	default:
		// The measured distributions themselves, where the result kept
		// them, rather than a normal one of their mean and spread: a
		// ShareGPT-shaped workload is nothing like normal.
		qi, qo := quantilesOf(run.Histograms["input_tokens"]), quantilesOf(run.Histograms["output_tokens"])
		if len(qi) > 0 && len(qo) > 0 {
			syn.Spread = workload.Spread{Input: qi, Output: qo}
			notes = append(notes, fmt.Sprintf("the %s workload is replayed as synthetic prompts drawn from its measured length distributions", c.Workload))
		} else {
			notes = append(notes, fmt.Sprintf("the %s workload is replayed as synthetic prompts of its measured lengths' mean and spread", c.Workload))
		}
	}
	if run.Tokens.CachedTotal > 0 && syn.Prefix.Tokens == 0 {
		notes = append(notes, fmt.Sprintf("the server reported %d cached prompt tokens; the replay's prompts share no prefix", run.Tokens.CachedTotal))
	}
	sized, _ := bench.SizedPrompts(t, bench.Calibrate(t), syn)
	return bench.Requests{Source: sized, Load: load}, strings.Join(notes, "; "), nil
}

// replayDataset rebuilds a dataset level exactly: the file read again,
// counted as the measured run counted it (the same tokenizer, or the same
// characters per token), filtered and sampled alike, the level starting at
// the same entry, each request sent as filler of the length the measured
// server's count gave it; a trace also keeps its timestamps and blocks.
func replayDataset(t Target, c results.Config, load driver.Load, nonce string) (bench.Work, error) {
	sz := c.DatasetSizing
	parsed, count, err := readRecorded(c)
	if err != nil {
		return nil, err
	}
	filters := workload.Filters{MinTokens: sz.MinTokens, MaxPromptTokens: sz.MaxPromptTokens, MaxContext: sz.MaxContext}
	kept, _ := workload.Size(parsed.Entries, count, filters, c.MaxTokens, sz.Kept, c.Seed)
	if len(kept) == 0 {
		return nil, fmt.Errorf("no entry passes the recorded length bounds")
	}
	ds := workload.Dataset{Entries: kept, DefaultMaxTokens: c.MaxTokens, Offset: sz.Offset, ByLength: true,
		Blocks: workload.TraceBlocks{BlockTokens: sz.BlockTokens, WordsPerToken: bench.Calibrate(t).WordsPerToken, Nonce: nonce, Seed: c.Seed}}
	if c.TraceSpeedup > 0 {
		load.Trace = workload.TraceSchedule(kept, c.TraceSpeedup)
	}
	return bench.Requests{Source: ds, Load: load}, nil
}

// readRecorded reads a level's dataset again, with the token counter it
// was sized with.
func readRecorded(c results.Config) (*workload.ParsedDataset, workload.TokenCounter, error) {
	f, err := input.Open(context.Background(), c.Dataset, bench.MaxDatasetBytes, "a dataset")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	parsed, err := workload.ParseDataset(f, workload.DatasetFormat(c.DatasetFormat))
	if err != nil {
		return nil, nil, err
	}
	count, err := counterOf(c.DatasetSizing)
	if err != nil {
		return nil, nil, err
	}
	return parsed, count, nil
}

// counterOf is the token counter a dataset level was sized with.
func counterOf(sz *results.DatasetSizing) (workload.TokenCounter, error) {
	switch sz.Counter {
	case "tokenizer":
		return workload.LoadTokenizer(context.Background(), sz.Tokenizer)
	case "chars":
		if !(sz.CharsPerToken > 0) {
			return nil, fmt.Errorf("the recorded characters per token %v is not positive", sz.CharsPerToken)
		}
		return bench.CharCounter{PerChar: 1 / sz.CharsPerToken}, nil
	}
	return workload.WordCounter{}, nil
}

// replayConversations rebuilds a level of a dataset's conversations: the
// file read again, the same conversations in the same order from the
// level's offset, the same think times and history.
func replayConversations(c results.Config) (bench.Work, error) {
	cc, sz := c.Conversations, c.DatasetSizing
	if sz == nil || c.Dataset == "" || c.Rate <= 0 && c.Concurrency <= 0 {
		return nil, fmt.Errorf("the conversations' dataset and sizing are missing from the result")
	}
	parsed, count, err := readRecorded(c)
	if err != nil {
		return nil, err
	}
	convs := workload.Conversations{Convs: workload.PickConversations(parsed.Conversations, count, sz.Kept, c.Seed),
		GapMin: time.Duration(cc.GapMinS * float64(time.Second)), GapMax: time.Duration(cc.GapMaxS * float64(time.Second)),
		LiveHistory: cc.LiveHistory, DefaultMaxTokens: c.MaxTokens, Offset: sz.Offset, Seed: c.Seed}
	if err := convs.Validate(); err != nil {
		return nil, err
	}
	return bench.Calls{Source: convs, Load: driver.CallLoad{Rate: c.Rate, Concurrency: c.Concurrency, Calls: cc.Calls,
		Duration: time.Duration(c.DurationS * float64(time.Second)), MaxConcurrentCalls: cc.MaxConcurrentCalls, Seed: c.Seed,
		DrainTimeout: replayDrain}}, nil
}

// quantilesOf is an encoded histogram's percentiles, 0 to 100 (none for an
// empty or unreadable one).
func quantilesOf(enc string) workload.Quantiles {
	if enc == "" {
		return nil
	}
	h, err := results.DecodeHistogram(enc)
	if err != nil || h.TotalCount() == 0 {
		return nil
	}
	q := make(workload.Quantiles, 101)
	for p := range q {
		q[p] = float64(h.ValueAtQuantile(float64(p)))
	}
	q[0] = float64(h.Min())
	return q
}

// replayable says why a measured level should not be fitted, or "".
func replayable(l results.Level) string {
	r := l.Run
	switch {
	case l.Error != "":
		return "the level failed: " + l.Error
	case r == nil:
		return "the level has no result"
	case r.Interrupted:
		return "the level was interrupted"
	case !r.Health.Healthy():
		return "the client limited this level's figures (" + r.Health.Verdict + ")"
	case r.Requests.OK < minReplayRequests:
		return fmt.Sprintf("only %d requests finished", r.Requests.OK)
	case r.Requests.Failed*10 > r.Requests.Sent:
		return fmt.Sprintf("%d of %d requests failed", r.Requests.Failed, r.Requests.Sent)
	}
	return ""
}

// sameDraws is a measured synthetic workload's own source: the same seed
// draws the same lengths for the same request indices, so the replay sends
// what was sent. Where the server counted a mean more than 2% away from
// those draws (prompts not calibrated, answers ended early by EOS), the
// lengths are shifted by the difference.
func sameDraws(c results.Config, run *results.Run, nonce string) workload.Synthetic {
	syn := bench.ReplaySynthetic(c, nonce)
	n := int(run.Requests.Sent)
	if n <= 0 {
		return syn
	}
	var in, out float64
	for i := c.Warmup; i < c.Warmup+n; i++ {
		a, b := syn.Lengths(i)
		in += float64(a)
		out += float64(b)
	}
	in, out = in/float64(n), out/float64(n)
	shift := func(size int, drawn, measured float64) int {
		if d := measured - drawn; math.Abs(d) > 0.02*drawn {
			return max(size+int(math.Round(d)), 1)
		}
		return size
	}
	syn.Tokens = shift(syn.Tokens, in, run.Tokens.Input.Mean)
	syn.MaxTokens = shift(syn.MaxTokens, out, run.Tokens.Output.Mean)
	return syn
}
