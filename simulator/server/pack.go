package server

import "slices"

// packed is a stream interval's group being held: its first token, and
// whether one is held (TokenEvent.Packed).
type packed struct {
	from int
	held bool
	// own says the run's plan is its own copy, whose tokens a group may
	// stand in for: a plan's tokens may be shared with other requests.
	own bool
}

// hold keeps a packed token for the event of its group, and says so.
func (r *run) hold(ev TokenEvent) bool {
	if !ev.Packed {
		return false
	}
	if !r.pack.held {
		r.pack.from, r.pack.held = ev.Index, true
	}
	r.observe(ev)
	return true
}

// tokenEvents is token i's event, or, when tokens are held for it, its
// group's: one event for each run of thought or answer tokens in it, the
// run's text in one delta, as vLLM sends a stream interval's tokens.
func (r *run) tokenEvents(a streamAnswer, i int) []byte {
	if !r.pack.held {
		return a.token(r, i)
	}
	from := r.pack.from
	r.pack.held = false
	out := make([]byte, chunkRoom, chunkRoom+256)
	for start := from; start <= i; {
		end := start + 1
		for end <= i && (end < r.thinking) == (start < r.thinking) {
			end++
		}
		out = append(out, r.runEvent(a, start, end)[chunkRoom:]...)
		start = end
	}
	return out
}

// runEvent is the event of tokens [start, end) as one: the answer's
// token at start stands for their text while it is written.
func (r *run) runEvent(a streamAnswer, start, end int) []byte {
	if end-start == 1 {
		return a.token(r, start)
	}
	if !r.pack.own {
		p := *r.plan
		p.Tokens = slices.Clone(p.Tokens)
		r.plan, r.pack.own = &p, true
	}
	toks := r.plan.Tokens
	kept := toks[start]
	n := 0
	for _, t := range toks[start:end] {
		n += len(t)
	}
	b := make([]byte, 0, n)
	for _, t := range toks[start:end] {
		b = append(b, t...)
	}
	toks[start] = string(b)
	e := a.token(r, start)
	toks[start] = kept
	return e
}
