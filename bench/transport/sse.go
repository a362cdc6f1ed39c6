package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
)

// maxEventBytes bounds one SSE line. A server that sends a longer line (or
// never ends one) gets a malformed-stream error instead of unbounded memory.
const maxEventBytes = 1 << 20

var errEventTooLarge = errors.New("sse line longer than 1 MiB")

// lineReader splits a stream into lines without allocating for lines that
// fit in its buffer.
type lineReader struct {
	br   *bufio.Reader
	long []byte // accumulates a line longer than the bufio buffer
}

func newLineReader(r io.Reader, size int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, size)}
}

func (l *lineReader) reset(r io.Reader) {
	l.br.Reset(r)
	l.long = l.long[:0]
}

// next returns the next line without its line ending. The slice is valid
// until the following call.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(l.long) > maxEventBytes {
				return nil, errEventTooLarge
			}
			line, err = l.br.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	if len(line) > maxEventBytes {
		return nil, errEventTooLarge
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, nil
}

// chunk is what the client needs from one streamed event. It is filled by a
// byte scan rather than a JSON decode: decoding every chunk costs more than
// everything else the client does per token.
type chunk struct {
	content bool // carries text or reasoning text
	// reasoning: it carries reasoning text (reasoning_content, or
	// reasoning); answer: answer text (content, or text), whose raw JSON
	// string starts answerTail, the rest of the payload after its key (read
	// for the think tags of a server without a
	// reasoning parser).
	reasoning, answer bool
	answerTail        []byte
	// reasoningTail is where a reasoning chunk's text's JSON string
	// starts, for its length (thinking.classify).
	reasoningTail []byte
	// reasoningTokens is usage.completion_tokens_details.reasoning_tokens,
	// when reasoningSeen; finishLength says finish_reason was "length".
	reasoningTokens int
	reasoningSeen   bool
	finishLength    bool
	// tool: it carries a tool call (delta.tool_calls, or a Responses
	// function_call_arguments delta); finishTool: finish_reason was
	// "tool_calls".
	tool, finishTool bool
	// toolItem: a Responses output_item.added opening a function call.
	toolItem bool
	// terminal: the event ends the stream as [DONE] does (the Responses
	// API's response.completed); responseID is a response.created
	// event's response id, escapes kept.
	terminal     bool
	responseID   []byte
	finished     bool // carries a non-null finish_reason
	hasError     bool // an error object in the stream
	usage        bool
	promptTokens int
	outTokens    int
	cachedTokens int
	cachedSeen   bool
	// usageOdd: completion_tokens was there but not a non-negative integer.
	usageOdd bool
	// promptOdd: prompt_tokens was there but not a count any request has
	// (negative, not a number, past MaxPlausiblePromptTokens); promptRaw
	// is what the server wrote.
	promptOdd bool
	promptRaw string
	// timings is llama.cpp's per-response timing object, in its final
	// chunk.
	timings               bool
	cacheN, predictedN    int
	promptMs, predictedMs float64
}

var (
	keyContent   = []byte(`"content":`)
	keyReasoning = []byte(`"reasoning_content":`)
	keyReason2   = []byte(`"reasoning":`)
	keyText      = []byte(`"text":`)
	keyToolCalls = []byte(`"tool_calls":`)
	valueTools   = []byte(`"tool_calls"`)
	keyTimings   = []byte(`"timings":`)
	keyCacheN    = []byte(`"cache_n":`)
	keyPromptMs  = []byte(`"prompt_ms":`)
	keyPredMs    = []byte(`"predicted_ms":`)
	keyPredN     = []byte(`"predicted_n":`)
	keyFinish    = []byte(`"finish_reason":`)
	keyUsage     = []byte(`"usage":`)
	keyPrompt    = []byte(`"prompt_tokens":`)
	keyCompl     = []byte(`"completion_tokens":`)
	keyCached    = []byte(`"cached_tokens":`)
	keyReasonTok = []byte(`"reasoning_tokens":`)
	valueLength  = []byte(`"length"`)
	keyError     = []byte(`"error":`)
	keyChoices   = []byte(`"choices":`)
	prefixData   = []byte("data:")
	payloadDone  = []byte("[DONE]")
)

// answerFrom marks the chunk as carrying answer text where v, the value
// after its content's key, is a non-empty string.
func (c *chunk) answerFrom(v []byte) {
	if nonEmptyValue(v) {
		c.content, c.answer, c.answerTail = true, true, v
	}
}

// startsObject says b opens a JSON object, after any space.
func startsObject(b []byte) bool {
	b = skipSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// scanChunk fills c from a data payload in one pass over its quotes. Inside
// a JSON string a quote is always escaped, so an unescaped `"content":`
// can only be a key. (Searching the payload once per key cost six passes
// per token: a tenth of the client's CPU at 10,000 short requests/s.)
func scanChunk(p []byte, c *chunk) {
	*c = chunk{}
	var finishSeen, usageSeen, timingsSeen, choices bool
	errAt := -1
	for i := 0; ; i++ {
		j := bytes.IndexByte(p[i:], '"')
		if j < 0 || i+j+1 >= len(p) {
			break
		}
		i += j
		rest := p[i:]
		switch rest[1] {
		case 'c':
			if bytes.HasPrefix(rest, keyContent) {
				c.answerFrom(rest[len(keyContent):])
			} else if bytes.HasPrefix(rest, keyChoices) {
				choices = true
			}
		case 't':
			if bytes.HasPrefix(rest, keyText) {
				c.answerFrom(rest[len(keyText):])
			} else if bytes.HasPrefix(rest, keyToolCalls) {
				// A tool call's name or a piece of its arguments: output,
				// as content is (an empty list is not).
				if v := skipSpace(rest[len(keyToolCalls):]); len(v) > 0 && v[0] == '[' && startsObject(v[1:]) {
					c.content, c.tool = true, true
				}
			} else if !timingsSeen && bytes.HasPrefix(rest, keyTimings) {
				timingsSeen = true
				readTimings(rest[len(keyTimings):], c)
			}
		case 'r':
			if bytes.HasPrefix(rest, keyReasoning) && nonEmptyValue(rest[len(keyReasoning):]) {
				c.content, c.reasoning, c.reasoningTail = true, true, rest[len(keyReasoning):]
			} else if bytes.HasPrefix(rest, keyReason2) && nonEmptyValue(rest[len(keyReason2):]) {
				c.content, c.reasoning, c.reasoningTail = true, true, rest[len(keyReason2):]
			}
		case 'f':
			if !finishSeen && bytes.HasPrefix(rest, keyFinish) {
				finishSeen = true
				v := skipSpace(rest[len(keyFinish):])
				c.finished = len(v) > 0 && v[0] == '"'
				c.finishLength = bytes.HasPrefix(v, valueLength)
				c.finishTool = bytes.HasPrefix(v, valueTools)
			}
		case 'u':
			if !usageSeen && bytes.HasPrefix(rest, keyUsage) {
				usageSeen = true
				readUsage(skipSpace(rest[len(keyUsage):]), c)
			}
		case 'e':
			if errAt < 0 && bytes.HasPrefix(rest, keyError) {
				errAt = i
			}
		}
	}
	if errAt >= 0 && !choices {
		v := skipSpace(p[errAt+len(keyError):])
		c.hasError = len(v) > 0 && (v[0] == '{' || v[0] == '"')
	}
}

// readTimings reads llama.cpp's timings object, which v (what follows
// its key) starts with.
func readTimings(v []byte, c *chunk) {
	if v = skipSpace(v); len(v) > 0 && v[0] == '{' {
		c.timings = true
		c.cacheN, _ = plausibleCount(intAfter(v, keyCacheN))
		c.predictedN, _ = intAfter(v, keyPredN)
		c.promptMs = floatAfter(v, keyPromptMs)
		c.predictedMs = floatAfter(v, keyPredMs)
	}
}

// stringValue is the raw bytes of the JSON string v starts with (after
// spaces), escapes kept, without its quotes.
func stringValue(v []byte) []byte {
	v = skipSpace(v)
	if len(v) == 0 || v[0] != '"' {
		return nil
	}
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return v[1:i]
		}
	}
	return nil
}

// nonEmptyValue reports whether v (what follows a key's colon) starts with
// a non-empty JSON string.
func nonEmptyValue(v []byte) bool {
	v = skipSpace(v)
	return len(v) >= 2 && v[0] == '"' && v[1] != '"'
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}

// intAfter parses the non-negative integer that follows key.
func intAfter(p, key []byte) (int, bool) {
	i := bytes.Index(p, key)
	if i < 0 {
		return 0, false
	}
	v := skipSpace(p[i+len(key):])
	n, digits := 0, 0
	for _, ch := range v {
		if ch < '0' || ch > '9' {
			break
		}
		if n < 1<<40 {
			n = n*10 + int(ch-'0')
		}
		digits++
	}
	return n, digits > 0
}

// MaxPlausiblePromptTokens bounds a believable usage.prompt_tokens: no
// served model reads ten million tokens of context.
const MaxPlausiblePromptTokens = 10_000_000

// rawAfter is the value that follows key, as written (up to 24 bytes).
func rawAfter(p, key []byte) string {
	i := bytes.Index(p, key)
	if i < 0 {
		return ""
	}
	v := skipSpace(p[i+len(key):])
	end := bytes.IndexAny(v, ",}")
	if end < 0 {
		end = len(v)
	}
	return string(bytes.TrimSpace(v[:min(end, 24)]))
}

// floatAfter parses the non-negative number that follows key (0 when
// there is none).
func floatAfter(p, key []byte) float64 {
	i := bytes.Index(p, key)
	if i < 0 {
		return 0
	}
	v := skipSpace(p[i+len(key):])
	end := 0
	for end < len(v) && (v[end] >= '0' && v[end] <= '9' || v[end] == '.' || v[end] == 'e' || v[end] == 'E' || v[end] == '+' || v[end] == '-') {
		end++
	}
	f, err := strconv.ParseFloat(string(v[:end]), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	return f
}

// dataPayload returns the payload of an SSE "data:" line, or ok=false for
// any other line (comments, event names, blank separators).
func dataPayload(line []byte) (payload []byte, ok bool) {
	if !bytes.HasPrefix(line, prefixData) {
		return nil, false
	}
	payload = line[len(prefixData):]
	if len(payload) > 0 && payload[0] == ' ' {
		payload = payload[1:]
	}
	return payload, true
}

// isSSEField reports whether a non-data line is still valid SSE: blank, a
// comment, or another field name.
func isSSEField(line []byte) bool {
	if len(line) == 0 || line[0] == ':' {
		return true
	}
	for _, f := range [][]byte{[]byte("event:"), []byte("id:"), []byte("retry:"), []byte("event"), []byte("id")} {
		if bytes.HasPrefix(line, f) {
			return true
		}
	}
	return false
}

// appendContent appends the text of a chunk's content (or completion text)
// field. It decodes just that string, only for workloads that keep text.
func appendContent(dst, payload []byte) []byte {
	for _, key := range [][]byte{keyContent, keyText} {
		if out, ok := appendString(dst, payload, key); ok {
			return out
		}
	}
	return dst
}

// appendStringAfter appends the decoded JSON string that follows key in
// payload (nothing when there is none).
func appendStringAfter(dst, payload, key []byte) []byte {
	out, _ := appendString(dst, payload, key)
	return out
}

// appendString is appendStringAfter, saying whether key held a string.
func appendString(dst, payload, key []byte) ([]byte, bool) {
	i := bytes.Index(payload, key)
	if i < 0 {
		return dst, false
	}
	v := skipSpace(payload[i+len(key):])
	if len(v) == 0 || v[0] != '"' {
		return dst, false
	}
	end := 1
	for end < len(v) && v[end] != '"' {
		if v[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(v) {
		return dst, true
	}
	var s string
	if json.Unmarshal(v[:end+1], &s) == nil {
		return append(dst, s...), true
	}
	return dst, false
}
