package sched

// vocabTerm is what the embedding table and the LM head cost, when the
// model's vocabulary is known (ModelShape.VocabSize): every engine looks a
// token's embedding up (a gather, no product, and no pass over the
// table) and multiplies the LM head only for the positions it samples,
// one a scheduled sequence (vLLM's logits_indices: the last token of a
// sequence's step, a prompt's chunk included), not for every prompt
// token. Without it, the cost model charges both as products of every
// scheduled token and reads the table with the weights every step.
type vocabTerm struct {
	// skipped are the parameters a scheduled token does not multiply
	// through (the table, and an untied head); head those multiplied a
	// sampled position; unread the bytes a step does not read (an
	// untied table).
	skipped, head, unread float64
}

// newVocabTerm is nil without a vocabulary, or when the table would be
// most of the model (a shape that cannot be right).
func newVocabTerm(m ModelShape, active float64) *vocabTerm {
	if m.VocabSize <= 0 || m.HiddenSize <= 0 {
		return nil
	}
	table := float64(m.VocabSize) * float64(m.HiddenSize)
	v := &vocabTerm{skipped: table, head: table}
	if !m.TiedEmbeddings {
		v.skipped, v.unread = 2*table, table*m.BytesPerParameter
	}
	if v.skipped >= active/2 {
		return nil
	}
	return v
}

// denseFLOPs is the step's product FLOPs of the non-expert and expert
// weights: every token through the body, every sequence through the head.
func (c *Costs) denseFLOPs(l Load) float64 {
	if c.vocab == nil {
		return 2 * c.ActiveParams * float64(l.Tokens)
	}
	return 2*(c.ActiveParams-c.vocab.skipped)*float64(l.Tokens) + 2*c.vocab.head*float64(min(l.Seqs, l.Tokens))
}

// unreadBytes are the weights a step does not stream.
func (c *Costs) unreadBytes() float64 {
	if c.vocab == nil {
		return 0
	}
	return c.vocab.unread
}

// Vocabulary says the cost model charges the embedding and the LM head
// as engines run them (ModelShape.VocabSize).
func (c *Costs) Vocabulary() bool { return c.vocab != nil }
