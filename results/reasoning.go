package results

// Reasoning is what a run's requests that reasoned did (a model that
// thinks before it answers: gpt-oss, Qwen3, DeepSeek-R1): how many
// answered, and how their output split between thought and answer.
type Reasoning struct {
	// Requests is the successful requests that reasoned; NoAnswer those
	// of them that never gave an answer token, BudgetSpent those of these
	// that ended at max_tokens (finish_reason "length"): the budget went
	// on thought.
	Requests    int64 `json:"requests"`
	NoAnswer    int64 `json:"no_answer"`
	BudgetSpent int64 `json:"budget_spent"`
	// ReasoningTotal and AnswerTotal split their output tokens;
	// ReasoningPerRequest and AnswerPerRequest per request.
	ReasoningTotal      int64   `json:"reasoning_tokens_total"`
	AnswerTotal         int64   `json:"answer_tokens_total"`
	ReasoningPerRequest Summary `json:"reasoning_per_request"`
	AnswerPerRequest    Summary `json:"answer_per_request"`
	// TPOTAnswer is the time per answer token after the first answer
	// token (ms), where Stats.TPOT is over every output token.
	TPOTAnswer Summary `json:"tpot_answer"`
	// ITLAnswer is the gap between answer chunks (ms), where Stats.ITL is
	// between any two.
	ITLAnswer Summary `json:"itl_answer"`
	// Source says where the reasoning counts came from: "usage" (the
	// server's completion_tokens_details.reasoning_tokens), "stream"
	// (reasoning chunks counted, a token each, the server reporting
	// none), "text" (its events packed several tokens: the server's
	// completion count split by the word pieces of each part's text),
	// "tokenizer" (split by each part's tokens, --tokenizer's count) or
	// "both" (requests counted more than one way).
	Source string `json:"source"`
}

// NoAnswerShare is the share of the reasoning requests that gave no
// answer.
func (r *Reasoning) NoAnswerShare() float64 {
	if r == nil || r.Requests == 0 {
		return 0
	}
	return float64(r.NoAnswer) / float64(r.Requests)
}

// mergeReasoning joins the shards' reasoning accounts: counts summed,
// distributions merged from their histograms.
func mergeReasoning(m *Run, shards []*Run) error {
	var r *Reasoning
	sources := map[string]bool{}
	for _, s := range shards {
		if s.Reasoning == nil {
			continue
		}
		if r == nil {
			r = &Reasoning{}
		}
		x := s.Reasoning
		r.Requests += x.Requests
		r.NoAnswer += x.NoAnswer
		r.BudgetSpent += x.BudgetSpent
		r.ReasoningTotal += x.ReasoningTotal
		r.AnswerTotal += x.AnswerTotal
		sources[x.Source] = true
	}
	if r == nil {
		return nil
	}
	// One way for every shard, or "both".
	r.Source = "stream"
	for s := range sources {
		r.Source = s
	}
	if len(sources) > 1 {
		r.Source = "both"
	}
	for _, h := range []struct {
		name  string
		into  *Summary
		count bool
	}{{"reasoning_tokens", &r.ReasoningPerRequest, true}, {"answer_tokens", &r.AnswerPerRequest, true}, {"tpot_answer_us", &r.TPOTAnswer, false},
		{"itl_answer_us", &r.ITLAnswer, false}} {
		sum, _, err := mergeNamed(shards, h.name)
		if err != nil {
			return err
		}
		if sum == nil {
			continue
		}
		m.Histograms[h.name] = EncodeHistogram(sum)
		if h.count {
			*h.into = SummarizeCounts(sum)
		} else {
			*h.into = SummarizeHistogram(sum, 1000)
		}
	}
	m.Reasoning = r
	return nil
}
