package transport

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/kneebench/knee/bench/record"
)

// Think tags, as a server without a reasoning parser streams them in the
// answer's text: Qwen3's and DeepSeek-R1's <think>…</think> (R1's
// templates open the tag in the prompt, so only the close comes), and
// gpt-oss's harmony channels, analysis before final. Each also as Go's
// and some encoders' JSON escapes write < and >.
var (
	thinkOpen  = [][]byte{[]byte("<think>"), []byte(`\u003cthink\u003e`), []byte("<|channel|>analysis"), []byte(`\u003c|channel|\u003eanalysis`)}
	thinkClose = [][]byte{[]byte("</think>"), []byte(`\u003c/think\u003e`), []byte("<|channel|>final<|message|>"), []byte(`\u003c|channel|\u003efinal\u003c|message|\u003e`)}
)

// thinking follows a stream's think tags.
type thinking struct {
	inside, opened bool
	// held is the answer text of chunks that end in what may be the
	// start of a tag (a server whose tokenizer has no token for <think>
	// streams it in pieces: "<", "th", "ink", ">"), heldChunks how many,
	// heldAt when the first came: booked once the tag is whole, or
	// cannot be one.
	held       []byte
	heldChunks int
	heldAt     time.Duration
	// count, when set (Target.CountTokens), counts each part's text,
	// kept as it streams, once the answer ends (flush).
	count func(string) int
}

// maxHeld bounds held: the longest tag, escaped, is 41 bytes.
const maxHeld = 64

// classify books a content chunk at t as reasoning, answer or both. The
// common token has no '<' and no escape anywhere to its event's end: it
// is answer, or thought inside tags, found with two byte searches and
// without reading where its string ends; only a chunk holding one is
// read for think tags. An answer chunk of white space alone counts as
// answer but is no first answer token (the "\n\n" after a closing tag).
func (th *thinking) classify(rec *record.Record, ch *chunk, t time.Duration) {
	if ch.reasoning {
		th.reasoned(rec, ch)
	}
	if ch.tool {
		// A tool call is the model's answer, not its thought.
		rec.ToolChunks++
		rec.AnswerChunks++
		if rec.FirstAnswer == 0 {
			rec.FirstAnswer = t
		}
		return
	}
	if !ch.answer {
		return
	}
	tail := skipSpace(ch.answerTail)
	if th.heldChunks > 0 {
		th.join(rec, stringValue(tail), t)
		return
	}
	thought, answer := th.inside, !th.inside
	var raw, text []byte // the string and its answer's part, once read
	read := false
	if bytes.IndexByte(tail, '<') >= 0 || bytes.IndexByte(tail, '\\') >= 0 {
		raw = stringValue(tail)
		text, read = raw, true
		if partialTag(raw) {
			th.held, th.heldChunks, th.heldAt = append(th.held[:0], raw...), 1, t
			return
		}
		if bytes.IndexByte(raw, '<') >= 0 || bytes.Contains(raw, []byte(`\u003c`)) {
			thought, answer, text = th.tags(rec, raw, thought, answer)
		}
	}
	if thought {
		rec.ReasoningChunks++
	}
	if rec.ReasoningChunks > 0 {
		// Each part's text splits a packed count (record.ThoughtTokens).
		if !read {
			raw = stringValue(tail)
			text, read = raw, true
		}
		th.measure(rec, raw, text, thought, answer)
	}
	if !answer {
		return
	}
	rec.AnswerChunks++
	if rec.FirstAnswer == 0 {
		if !read {
			text = stringValue(tail)
		}
		if !blank(text) {
			rec.FirstAnswer = t
		}
	}
}

// reasoned books a chunk of the model's reasoning field.
func (th *thinking) reasoned(rec *record.Record, ch *chunk) {
	rec.ReasoningChunks++
	raw := stringValue(ch.reasoningTail)
	rec.ReasoningText += pieces(raw)
	if th.count != nil {
		rec.ReasoningRaw = append(rec.ReasoningRaw, raw...)
	}
}

// measure books a content chunk's text raw in pieces (see pieces), text
// its answer's part (the rest thought, tags and all); each is read once.
func (th *thinking) measure(rec *record.Record, raw, text []byte, thought, answer bool) {
	if th.count != nil {
		keepParts(rec, raw, text, thought, answer)
	}
	switch {
	case answer && thought:
		a := pieces(text)
		rec.AnswerText += a
		rec.ReasoningText += max(pieces(raw)-a, 0)
	case answer:
		rec.AnswerText += pieces(raw)
	case thought:
		rec.ReasoningText += pieces(raw)
	}
}

// pieces counts the word pieces of a raw JSON string, what a tokenizer
// makes tokens of: a run of letters, digits or non-ASCII bytes is one
// (its leading space with it), each other character one, each escape
// one, white space none. It is no tokenizer, but splits two parts of one
// text far closer than their bytes (a thought's short words and an
// answer's long ones hold as many bytes a token as they do pieces).
func pieces(b []byte) int {
	n, inWord := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80:
			if !inWord {
				n++
			}
			inWord = true
			continue
		case c == '\\':
			i++
			if i < len(b) && b[i] == 'u' {
				i += 4
			}
			if i < len(b) && (b[i] == 'n' || b[i] == 't' || b[i] == 'r') {
				inWord = false
				continue
			}
			n++
		case c == ' ' || c == '\t':
		default:
			n++
		}
		inWord = false
	}
	return n
}

// tags reads the think tags of raw, a chunk's answer string: whether the
// chunk holds thought, answer, and the answer's part of it.
func (th *thinking) tags(rec *record.Record, raw []byte, thought, answer bool) (bool, bool, []byte) {
	open := indexAny(raw, thinkOpen)
	end, n := lastAny(raw, thinkClose)
	switch {
	case end >= 0 && end > open:
		if open < 0 && !th.opened && rec.ReasoningChunks == 0 && rec.AnswerChunks > 0 {
			// Opened by the prompt (DeepSeek-R1's template): what came
			// so far was thought.
			rec.ReasoningChunks, rec.AnswerChunks, rec.FirstAnswer = rec.AnswerChunks, 0, 0
		}
		th.inside, th.opened = false, true
		text := raw[end+n:]
		return true, !blank(text), text
	case open >= 0:
		answer = !th.inside && !blank(raw[:open])
		th.inside, th.opened = true, true
		return true, answer, raw[:open]
	}
	return thought, answer, raw
}

// blank reports whether a raw JSON string's text is white space alone
// (spaces, tabs and the escapes \n, \r, \t), without copying it.
func blank(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
		case '\\':
			if i+1 >= len(b) || (b[i+1] != 'n' && b[i+1] != 'r' && b[i+1] != 't') {
				return false
			}
			i++
		default:
			return false
		}
	}
	return true
}

// indexAny is the index of the first of seps in b, or -1.
func indexAny(b []byte, seps [][]byte) int {
	at := -1
	for _, s := range seps {
		if i := bytes.Index(b, s); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	return at
}

// lastAny is the index of the last of seps in b and its length, or -1.
func lastAny(b []byte, seps [][]byte) (int, int) {
	at, n := -1, 0
	for _, s := range seps {
		if i := bytes.LastIndex(b, s); i > at {
			at, n = i, len(s)
		}
	}
	return at, n
}

// join adds a chunk's answer text raw, at t, to the held text, and books
// the held chunks once their text ends in no part of a tag: the chunks
// that made a tag are thought, and the first answer token, when answer
// comes, is the first of them (no tag) or the last (after a close).
func (th *thinking) join(rec *record.Record, raw []byte, t time.Duration) {
	th.held = append(th.held, raw...)
	th.heldChunks++
	if partialTag(th.held) && len(th.held) < maxHeld {
		return
	}
	th.book(rec, t)
}

// book books the held chunks, the last of them at last.
func (th *thinking) book(rec *record.Record, last time.Duration) {
	n, first, text := th.heldChunks, th.heldAt, th.held
	th.heldChunks = 0
	thought, answer := th.inside, !th.inside
	tagged := false
	if bytes.IndexByte(text, '<') >= 0 || bytes.Contains(text, []byte(`\u003c`)) {
		wasInside, wasOpened := th.inside, th.opened
		thought, answer, text = th.tags(rec, text, thought, answer)
		tagged = th.inside != wasInside || th.opened != wasOpened
	}
	switch {
	case tagged && answer:
		// A tag, then answer in the last chunk.
		rec.ReasoningChunks += n
		rec.AnswerChunks++
		if rec.FirstAnswer == 0 && !blank(text) {
			rec.FirstAnswer = last
		}
	case thought && !answer:
		rec.ReasoningChunks += n
	default:
		rec.AnswerChunks += n
		if thought {
			rec.ReasoningChunks += n
		}
		if rec.FirstAnswer == 0 && !blank(text) {
			rec.FirstAnswer = first
		}
	}
	th.held = th.held[:0]
}

// flush books what is held when the stream ends (a tag never finished),
// then counts the two parts' text with the tokenizer, when there is one.
func (th *thinking) flush(rec *record.Record) {
	if th.heldChunks > 0 {
		th.book(rec, th.heldAt)
	}
	if th.count != nil {
		tokenizeParts(rec, th.count)
	}
}

// partialTag reports whether raw ends in the start of a think tag that
// is not whole yet.
func partialTag(raw []byte) bool {
	from := max(len(raw)-maxHeld, 0)
	for i := len(raw) - 1; i >= from; i-- {
		if raw[i] != '<' && !(raw[i] == '\\' && bytes.HasPrefix(raw[i:], []byte(`\u003c`))) &&
			!(raw[i] == '\\' && len(raw)-i < 6 && bytes.HasPrefix([]byte(`\u003c`), raw[i:])) {
			continue
		}
		s := raw[i:]
		for _, tags := range [][][]byte{thinkOpen, thinkClose} {
			for _, tag := range tags {
				if len(s) < len(tag) && bytes.HasPrefix(tag, s) {
					return true
				}
			}
		}
	}
	return false
}

// keepParts keeps a chunk's text by part for the tokenizer: raw the
// chunk's string, text its answer's part (the rest, tags and all, thought).
func keepParts(rec *record.Record, raw, text []byte, thought, answer bool) {
	switch {
	case answer && thought:
		rec.AnswerRaw = append(rec.AnswerRaw, text...)
		rec.ReasoningRaw = append(rec.ReasoningRaw, bytes.TrimSuffix(raw, text)...)
	case answer:
		rec.AnswerRaw = append(rec.AnswerRaw, raw...)
	case thought:
		rec.ReasoningRaw = append(rec.ReasoningRaw, raw...)
	}
}

// tokenizeParts counts a reasoned answer's two parts with the model's
// tokenizer, in place of their word pieces, and lets their text go.
func tokenizeParts(rec *record.Record, count func(string) int) {
	if rec.ReasoningChunks == 0 {
		rec.ReasoningRaw, rec.AnswerRaw = nil, nil
		return
	}
	var thought, answer string
	okT := json.Unmarshal(append(append([]byte{'"'}, rec.ReasoningRaw...), '"'), &thought) == nil
	okA := json.Unmarshal(append(append([]byte{'"'}, rec.AnswerRaw...), '"'), &answer) == nil
	if okT && okA {
		rec.ReasoningText, rec.AnswerText, rec.PartsTokenized = count(thought), count(answer), true
	}
	rec.ReasoningRaw, rec.AnswerRaw = nil, nil
}
