package bench

import (
	"fmt"
	"math"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// Prober sends one request and fills its record: the live client, or a
// stand-in that answers in virtual time (knee predict).
type Prober interface {
	Probe(r *workload.Request, rec *record.Record)
}

// Calibration relates knee's filler words to the server's own token count.
type Calibration struct {
	// Words and Tokens are the probe's filler size and what the server
	// counted for it (less the chat overhead).
	Words, Tokens int
	// Overhead is what the server counts for a one-word message.
	Overhead int
	// WordsPerToken scales filler so N tokens means N as the server counts.
	WordsPerToken float64
	OK            bool
	Note          string
}

// String describes the calibration for the report.
func (c Calibration) String() string {
	if !c.OK {
		return "calibration unavailable (" + c.Note + "); assuming one filler word per token"
	}
	return fmt.Sprintf("calibration: %d filler words = %d server tokens (%.3f a token; a one-word message: %d)",
		c.Words, c.Tokens, c.WordsPerToken, c.Overhead)
}

// Calibrate sends two short probes (a one-word message and a 512-word one,
// each asking for one token) and compares the server's prompt_tokens. A
// server that refuses 512 words (an embedding model of 512 tokens, as
// many are; llama-server's 512-token batch) gets 128 instead.
func Calibrate(c Prober) Calibration {
	words := 512
	probe := func(n int) (*record.Record, error) {
		req := workload.Request{
			Messages:  []workload.Message{{Role: "user", Content: workload.Filler(n, 1, 0xca11b, uint64(n))}},
			MaxTokens: 1,
		}
		rec := countPrompt(c, &req)
		if rec.Class != "" {
			return nil, fmt.Errorf("probe failed: %s %s", rec.Class, rec.Message)
		}
		if !rec.UsageReported || rec.PromptTokens == 0 {
			return nil, fmt.Errorf("the server reports no usage.prompt_tokens")
		}
		return rec, nil
	}
	small, err := probe(1)
	if err != nil {
		return Calibration{WordsPerToken: 1, Note: err.Error()}
	}
	big, err := probe(words)
	if err != nil {
		words = 128
		if big, err = probe(words); err != nil {
			return Calibration{WordsPerToken: 1, Note: err.Error()}
		}
	}
	tokens := big.PromptTokens - small.PromptTokens + 1
	if tokens < words/4 {
		return Calibration{WordsPerToken: 1, Note: fmt.Sprintf("implausible count %d for %d words", tokens, words)}
	}
	return Calibration{Words: words, Tokens: tokens, Overhead: small.PromptTokens, WordsPerToken: float64(words) / float64(tokens), OK: true}
}

// SizedPrompts fits synthetic prompts to the server's own token count. A
// prompt of the real shape (template, opening tag and filler) costs an
// offset plus a slope per filler word; probes of that shape at three sizes
// fit both by least squares, and a probe at the solution checks it (and
// corrects once), so a prompt of syn.Tokens means that many prompt_tokens
// as the server counts them. It returns the source to use and a line for
// the report saying what the last probe counted; without a calibration it
// returns syn unchanged.
func SizedPrompts(c Prober, cal Calibration, syn workload.Synthetic) (workload.Synthetic, string) {
	want := syn.Tokens
	if !cal.OK {
		return syn, fmt.Sprintf("input tokens not calibrated (%s): prompts hold %d filler words", cal.Note, want)
	}
	if syn.Prefix.Tokens > 0 {
		// A shared prefix is sized by the calibration and then fixed: the
		// fit below sizes the rest of the prompt around it.
		syn.Prefix.WordsPerToken = cal.WordsPerToken
		want += syn.Prefix.Tokens
	}
	z := newSizer(c)
	f := z.fitShape(cal, syn, want)
	fit := f.fit
	got, ok := z.probe(fit)
	if !ok {
		return fit, fmt.Sprintf("input tokens: %d asked, scaled by the calibration only (the probe of the prompt shape failed)", want)
	}
	searched, counted := 0, lastProbe(want, got)
	switch sp := syn.Spread; {
	case f.fitted && sp.InputStddev == 0 && sp.RangeRatio == 0 && len(sp.Input) == 0:
		// Every prompt of one length costs the same but for its opening
		// words: search the word count, and pad the last tokens.
		var mean float64
		fit, mean, searched = refine(z.probeAt, fit, syn.Tokens, want, got, f.slope)
		counted = fmt.Sprintf("%d probes of the same shape (chat template included) counted %.1f on average (%s)", meanOf, mean, missMean(want, mean))
	case want != got:
		fit.Tokens = max(fit.Tokens+want-got, 1)
		if again, ok := z.probe(fit); ok {
			counted = lastProbe(want, again)
		}
	}
	return fit, f.note(syn, want, searched, counted)
}

// sizer sends the probes that size prompts: each opens with a tag of its
// own, so none warms a prefix a measured prompt will send (a shared
// prefix's above all); what the tag costs is measured once and taken off.
type sizer struct {
	c       Prober
	tagCost int
	next    int
}

func newSizer(c Prober) *sizer {
	z := &sizer{c: c, next: 1}
	word := workload.Request{Messages: []workload.Message{{Role: "user", Content: "the"}}}
	plain, ok1 := z.send(word)
	tagged, ok2 := z.send(workload.Unmeasured(word, probeTag(0)))
	if ok1 && ok2 && tagged > plain {
		z.tagCost = tagged - plain
	}
	return z
}

func probeTag(k int) string { return fmt.Sprintf("[knee probe %02d]", k) }

// send is the prompt tokens the server counted for req, asked for one
// token, and whether it counted them.
func (z *sizer) send(req workload.Request) (int, bool) {
	req.MaxTokens = 1
	rec := countPrompt(z.c, &req)
	return rec.PromptTokens, rec.Class == "" && rec.UsageReported && rec.PromptTokens > 0
}

// countPrompt sends a probe for its prompt's count. An answer that came
// whole without one, or an HTTP error, is asked again, twice at most:
// llama-server's /v1/messages leaves message_start out, and the prompt's
// count with it, when its one token streamed no text (about one probe in
// twenty against its tiny model), and a server injecting failures (llm-d's
// --failure-injection-rate) refuses a probe as it refuses any request. A
// timeout or a connection that failed is not asked again: it was slow,
// or the server is gone.
func countPrompt(c Prober, req *workload.Request) *record.Record {
	var rec *record.Record
	for range 3 {
		rec = &record.Record{}
		c.Probe(req, rec)
		if rec.Class == "" && rec.PromptTokens > 0 || rec.Class != "" && rec.Status < 400 {
			break
		}
	}
	return rec
}

// probeAt counts s's prompt tagged k (the next tag when k is 0), the tag
// taken off.
func (z *sizer) probeAt(s workload.Synthetic, k int) (int, bool) {
	if k == 0 {
		k = z.next
		z.next++
	}
	// The probe has the asked size: a spread would draw it at random.
	s.Spread = workload.Spread{}
	n, ok := z.send(workload.Unmeasured(s.Request(-k), probeTag(k)))
	return n - z.tagCost, ok && n > z.tagCost
}

func (z *sizer) probe(s workload.Synthetic) (int, bool) { return z.probeAt(s, 0) }

// shapeFit is a line through probes of the prompt's shape: tokens counted
// against filler words, and the prompt it sizes.
type shapeFit struct {
	fit           workload.Synthetic
	offset, slope float64
	fitted        bool
	probes        int
}

// fitShape probes three sizes across the top half of the asked one, in
// filler words at one word per token, and fits a line through them.
func (z *sizer) fitShape(cal Calibration, syn workload.Synthetic, want int) shapeFit {
	words := func(s workload.Synthetic, w int) workload.Synthetic {
		s.Tokens, s.WordsPerToken = max(w, 1), 1
		return s
	}
	guess := max(int(float64(want-(cal.Overhead-1))*cal.WordsPerToken+0.5), 1)
	var xs, ys []float64
	// The probes span the top half of the size, long enough to be drawn
	// as the measured prompts are (workload.BagFrom words and more) when
	// the size allows.
	low := max(guess/2, min(workload.BagFrom, guess/2+1), 1)
	for _, w := range []int{low, max((low+guess)/2, low+1), max(guess, low+2)} {
		if got, ok := z.probe(words(syn, w)); ok {
			xs, ys = append(xs, float64(w)), append(ys, float64(got))
		}
	}
	f := shapeFit{fit: syn, probes: len(xs)}
	f.offset, f.slope, f.fitted = fitLine(xs, ys)
	if !f.fitted {
		// The old way: the calibration's ratio and overhead alone.
		f.fit.WordsPerToken, f.fit.Tokens = cal.WordsPerToken, max(want-(cal.Overhead-1), 1)
	} else {
		// count = offset + slope·words, so Tokens filler tokens of 1/slope
		// words each land on want.
		f.fit.WordsPerToken = 1 / f.slope
		f.fit.Tokens = max(int(float64(want)-f.offset+0.5), 1)
	}
	return f
}

// note says how the prompts were sized and what the last probes counted.
func (f shapeFit) note(syn workload.Synthetic, want, searched int, counted string) string {
	how := "the calibration's ratio"
	if f.fitted {
		how = fmt.Sprintf("a fit of %d probes of the prompt's shape (%.1f tokens + %.3f per filler word)", f.probes, f.offset, f.slope)
	}
	if searched > 0 {
		how += fmt.Sprintf(" and a search of %d more", searched)
	}
	asked := fmt.Sprint(want)
	if syn.Prefix.Tokens > 0 {
		asked = fmt.Sprintf("%d (a %d-token shared prefix and %d of the request's own)", want, syn.Prefix.Tokens, syn.Tokens)
	}
	note := fmt.Sprintf("input tokens: %s asked; sized by %s; %s", asked, how, counted)
	if floor := int(f.offset + f.slope + 0.5); f.fitted && want < floor {
		note += fmt.Sprintf("; the smallest prompt of this shape is about %d tokens", floor)
	}
	return note
}

// fitLine is the least-squares line through the points, when there are
// at least two distinct x and the slope is positive.
func fitLine(xs, ys []float64) (offset, slope float64, ok bool) {
	n := float64(len(xs))
	if len(xs) < 2 {
		return 0, 0, false
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, 0, false
	}
	slope = (n*sxy - sx*sy) / den
	offset = (sy - slope*sx) / n
	return offset, slope, slope > 0.05
}

// lastProbe says what the last probe of the prompts' shape counted: the
// one after the correction, when there was one.
func lastProbe(want, got int) string {
	return fmt.Sprintf("a last probe of the same shape (chat template included) counted %d (%s)",
		got, missText(want, got))
}

// missText says how far a count is from the size asked.
func missText(want, got int) string {
	if want == got {
		return "exact"
	}
	return fmt.Sprintf("%+d, %+.1f%%", got-want, 100*float64(got-want)/float64(want))
}

// missMean says how far a mean count is from the size asked.
func missMean(want int, got float64) string {
	if math.Abs(got-float64(want)) < 0.05 {
		return "exact"
	}
	return fmt.Sprintf("%+.1f, %+.1f%%", got-float64(want), 100*(got-float64(want))/float64(want))
}

// CharCounter counts tokens as characters times a measured ratio.
type CharCounter struct{ PerChar float64 }

// Count implements workload.TokenCounter.
func (c CharCounter) Count(text string) int { return int(float64(len(text))*c.PerChar + 0.5) }

// CalibratedCounter fits the server's tokens per character on a few of the
// entries' texts (prompts and reference answers), each sent as a one-token
// probe, and counts every text by that ratio. Each probe opens with a tag
// of its own ("[knee probe 07]" and a newline), so a prefix-caching server
// never holds a measured prompt, or the start of one, because a probe sent
// it; a probe of the tag alone says what the tag costs. It returns the
// counter and a line for the report; when the server reports no usage it
// falls back to counting words.
func CalibratedCounter(c Prober, entries []workload.DatasetEntry) (workload.TokenCounter, string) {
	probe := func(text string) (int, bool) {
		req := workload.Request{Messages: []workload.Message{{Role: "user", Content: text}}, MaxTokens: 1}
		rec := &record.Record{}
		c.Probe(&req, rec)
		return rec.PromptTokens, rec.Class == "" && rec.UsageReported && rec.PromptTokens > 0
	}
	tag := func(k int) string { return fmt.Sprintf("[knee probe %02d]\n", k) }
	base, ok := probe(tag(0))
	if !ok {
		return workload.WordCounter{}, "estimated as one token per word (the server reports no usage.prompt_tokens for a probe)"
	}
	var chars, tokens int
	probes, tried := 0, 0
	for i := 0; i < len(entries) && probes < 16; i += max(1, len(entries)/16) {
		e := entries[i]
		texts := []string{e.Reference}
		if len(e.Messages) > 0 {
			texts = append(texts, e.Messages[len(e.Messages)-1].Content)
		}
		for _, text := range texts {
			if len(text) < 16 || probes >= 16 {
				continue
			}
			tried++
			got, ok := probe(tag(probes+1) + text)
			if !ok || got <= base {
				continue
			}
			chars += len(text)
			tokens += got - base
			probes++
		}
	}
	switch {
	case tried == 0:
		// A trace of lengths (Mooncake's) has no text to probe: its
		// lengths are tokens already.
		return workload.WordCounter{}, "as the file gives them (no line holds text of 16 characters or more to probe; texts are counted one token a word)"
	case chars == 0:
		return workload.WordCounter{}, fmt.Sprintf("estimated as one token per word (all %d probes of the dataset's texts failed or counted nothing)", tried)
	}
	ratio := float64(tokens) / float64(chars)
	return CharCounter{ratio}, fmt.Sprintf("estimated from %d probes against the server's prompt_tokens (%.2f characters per token; each probe opened with its own tag, so none warmed a measured prompt)", probes, 1/ratio)
}
