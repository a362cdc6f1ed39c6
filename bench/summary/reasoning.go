package summary

import (
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
)

// thinkHists are the reasoning requests' distributions, made when the
// first one ends: reasoning and answer tokens per request, and the time
// per answer token after the first answer token (µs).
type thinkHists struct {
	reasoning, answer, tpotAnswer, itlAnswer *hdrhistogram.Histogram
}

func newThinkHists() *thinkHists {
	return &thinkHists{reasoning: hdrhistogram.New(1, 100_000_000, 3), answer: hdrhistogram.New(1, 100_000_000, 3), tpotAnswer: newHist(), itlAnswer: newHist()}
}

// thinkCounts are the reasoning requests' counters.
type thinkCounts struct {
	requests, noAnswer, budgetSpent                int64
	reasoningTotal, answerTotal                    int64
	fromUsage, fromStream, fromText, fromTokenizer int64
}

func (c *thinkCounts) add(o thinkCounts) {
	c.requests += o.requests
	c.noAnswer += o.noAnswer
	c.budgetSpent += o.budgetSpent
	c.reasoningTotal += o.reasoningTotal
	c.answerTotal += o.answerTotal
	c.fromUsage += o.fromUsage
	c.fromStream += o.fromStream
	c.fromText += o.fromText
	c.fromTokenizer += o.fromTokenizer
}

// mergeThink merges o's reasoning distributions into l's.
func (l *latencies) mergeThink(o *latencies) {
	if o.think == nil {
		return
	}
	if l.think == nil {
		l.think = newThinkHists()
	}
	l.think.reasoning.Merge(o.think.reasoning)
	l.think.answer.Merge(o.think.answer)
	l.think.tpotAnswer.Merge(o.think.tpotAnswer)
	l.think.itlAnswer.Merge(o.think.itlAnswer)
}

// addThink books a successful request's first answer token and, when it
// reasoned, its split of thought and answer.
func (s *shard) addThink(a *aggregate, r *record.Record) {
	if r.FirstAnswer > 0 {
		s.record(s.lat.ttfat, r.FirstAnswer-r.Sent)
		s.record(s.lat.ttfatSched, r.FirstAnswer-r.Scheduled)
	}
	if !r.Reasoned() {
		return
	}
	if s.lat.think == nil {
		s.lat.think = newThinkHists()
	}
	c := &a.think
	c.requests++
	if r.NoAnswer() {
		c.noAnswer++
		if r.FinishLength {
			c.budgetSpent++
		}
	}
	switch r.ThoughtCounted() {
	case "usage":
		c.fromUsage++
	case "text":
		c.fromText++
	case "tokenizer":
		c.fromTokenizer++
	default:
		c.fromStream++
	}
	thought, answer := r.ThoughtTokens(), r.AnswerTokens()
	c.reasoningTotal += int64(thought)
	c.answerTotal += int64(answer)
	_ = s.lat.think.reasoning.RecordValue(int64(max(thought, 1)))
	if answer > 0 {
		_ = s.lat.think.answer.RecordValue(int64(answer))
	}
	if answer > 1 && r.FirstAnswer > 0 {
		s.record(s.lat.think.tpotAnswer, (r.LastToken-r.FirstAnswer)/time.Duration(answer-1))
	}
	// The gaps between answer chunks: from the first answer token on
	// (servers stream thought first, then the answer).
	if i := slices.Index(r.ChunkTimes, r.FirstAnswer); r.FirstAnswer > 0 && i >= 0 {
		for j := i + 1; j < len(r.ChunkTimes); j++ {
			s.record(s.lat.think.itlAnswer, r.ChunkTimes[j]-r.ChunkTimes[j-1])
		}
	}
}

// thinkResult fills the run's reasoning account, histograms and the
// warning for answers that never came.
func thinkResult(res *results.Run, lat *latencies, c thinkCounts, maxTokens int, histograms bool) {
	res.Stats.TTFAT, res.Stats.TTFATSched = summarize(lat.ttfat, 1000), summarize(lat.ttfatSched, 1000)
	if histograms {
		res.Histograms["ttfat_us"] = encodeHist(lat.ttfat)
		res.Histograms["ttfat_sched_us"] = encodeHist(lat.ttfatSched)
	}
	if c.requests == 0 || lat.think == nil {
		return
	}
	source := "stream"
	ways := 0
	for _, n := range []int64{c.fromUsage, c.fromStream, c.fromText, c.fromTokenizer} {
		if n > 0 {
			ways++
		}
	}
	switch {
	case ways > 1:
		source = "both"
	case c.fromUsage > 0:
		source = "usage"
	case c.fromText > 0:
		source = "text"
	case c.fromTokenizer > 0:
		source = "tokenizer"
	}
	res.Reasoning = &results.Reasoning{Requests: c.requests, NoAnswer: c.noAnswer, BudgetSpent: c.budgetSpent,
		ReasoningTotal: c.reasoningTotal, AnswerTotal: c.answerTotal,
		ReasoningPerRequest: results.SummarizeCounts(lat.think.reasoning), AnswerPerRequest: results.SummarizeCounts(lat.think.answer),
		TPOTAnswer: summarize(lat.think.tpotAnswer, 1000), ITLAnswer: summarize(lat.think.itlAnswer, 1000), Source: source}
	if histograms {
		res.Histograms["reasoning_tokens"] = encodeHist(lat.think.reasoning)
		res.Histograms["answer_tokens"] = encodeHist(lat.think.answer)
		res.Histograms["tpot_answer_us"] = encodeHist(lat.think.tpotAnswer)
		res.Histograms["itl_answer_us"] = encodeHist(lat.think.itlAnswer)
	}
	if c.noAnswer > 0 {
		why := "the stream ended before any answer token"
		if c.budgetSpent > 0 {
			why = fmt.Sprintf("%d of them ended at max_tokens (%d), every token spent on thought: raise --max-tokens, or lower --reasoning-effort", c.budgetSpent, maxTokens)
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d requests that reasoned gave no answer (%.1f%%): %s; TTFAT counts only those that answered",
			c.noAnswer, c.requests, 100*float64(c.noAnswer)/float64(c.requests), why))
	}
}
