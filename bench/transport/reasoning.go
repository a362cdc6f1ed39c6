package transport

import (
	"bytes"
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
}

// classify books a content chunk at t as reasoning, answer or both. A
// chunk of answer text is read for think tags only when it holds a '<'
// (raw or escaped), so the common chunk costs one byte search. An answer
// chunk of white space alone counts as answer but is no first answer
// token (the "\n\n" after a closing tag).
func (th *thinking) classify(rec *record.Record, ch *chunk, t time.Duration) {
	if ch.reasoning {
		rec.ReasoningChunks++
	}
	if !ch.answer {
		return
	}
	tail := skipSpace(ch.answerTail)
	// The common token has no tag and no escape anywhere to the
	// payload's end: it is answer, or thought inside tags, found without
	// reading where its string ends (but for the first answer token,
	// which must not be white space alone).
	if bytes.IndexByte(tail, '<') < 0 && bytes.IndexByte(tail, '\\') < 0 {
		if th.inside {
			rec.ReasoningChunks++
			return
		}
		rec.AnswerChunks++
		if rec.FirstAnswer == 0 && !blank(stringValue(tail)) {
			rec.FirstAnswer = t
		}
		return
	}
	raw := stringValue(tail)
	thought, answer, text := th.inside, !th.inside, raw
	if bytes.IndexByte(raw, '<') >= 0 || bytes.IndexByte(raw, '\\') >= 0 && bytes.Contains(raw, []byte(`\u003c`)) {
		open := indexAny(raw, thinkOpen)
		end, n := lastAny(raw, thinkClose)
		switch {
		case end >= 0 && end > open:
			if open < 0 && !th.opened && rec.ReasoningChunks == 0 && rec.AnswerChunks > 0 {
				// Opened by the prompt (DeepSeek-R1's template): what
				// came so far was thought.
				rec.ReasoningChunks, rec.AnswerChunks, rec.FirstAnswer = rec.AnswerChunks, 0, 0
			}
			thought, text = true, raw[end+n:]
			answer = !blank(text)
			th.inside, th.opened = false, true
		case open >= 0:
			thought, text = true, raw[:open]
			answer = !th.inside && !blank(text)
			th.inside, th.opened = true, true
		}
	}
	if thought {
		rec.ReasoningChunks++
	}
	if !answer {
		return
	}
	rec.AnswerChunks++
	if rec.FirstAnswer == 0 && !blank(text) {
		rec.FirstAnswer = t
	}
}

// blank reports whether a raw JSON string's text is white space alone.
func blank(b []byte) bool {
	return len(bytes.TrimSpace(unescapeSpace(b))) == 0
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

// unescapeSpace turns the JSON escapes of white space into spaces, so that
// "\n\n" after a closing tag reads as nothing.
func unescapeSpace(b []byte) []byte {
	for _, e := range []string{`\n`, `\r`, `\t`} {
		b = bytes.ReplaceAll(b, []byte(e), []byte(" "))
	}
	return b
}
