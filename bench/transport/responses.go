package transport

import (
	"bytes"
	"strconv"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

// responsesProtocol is OpenAI's Responses API, POST /v1/responses, as vLLM
// serves it: the messages go as input items, the budget as
// max_output_tokens, and the stream is typed events ("event: NAME" and a
// JSON object whose "type" is NAME), ended by response.completed (or
// response.incomplete) rather than data: [DONE].
type responsesProtocol struct{}

func init() { register("responses", responsesProtocol{}) }

// keepCall keeps a function call's item as the next turn sends it back.
func (responsesProtocol) keepCall(rec *record.Record, payload []byte) {
	keepResponsesToolCall(rec, payload)
}

// appendBody writes input as a list of {role, content} items: with a
// previous response named (the server holds the history), only the
// turn's new messages. store is false unless a later turn will name this
// response: a benchmark's answers kept by the server would grow its
// memory for nothing (vLLM keeps stored responses only when
// VLLM_ENABLE_RESPONSES_API_STORE is set).
func (responsesProtocol) appendBody(b *body, r *workload.Request, model string) {
	if b.field("model") {
		b.dst = wire.AppendString(b.dst, model)
	}
	if b.field("input") {
		b.dst = append(b.dst, '[')
		for i, m := range r.Messages {
			if i > 0 {
				b.dst = append(b.dst, ',')
			}
			b.dst = appendInputItems(b.dst, m)
		}
		b.dst = append(b.dst, ']')
	}
	writeTools(b, r)
	if r.PreviousResponse != "" && b.field("previous_response_id") {
		b.dst = wire.AppendString(b.dst, r.PreviousResponse)
	}
	if r.MaxTokens > 0 && b.field("max_output_tokens") {
		b.dst = strconv.AppendInt(b.dst, int64(r.MaxTokens), 10)
	}
	if (r.IgnoreEOS || b.ignoreEOS) && b.field("ignore_eos") {
		b.dst = append(b.dst, "true"...)
	}
	if b.field("store") {
		b.dst = strconv.AppendBool(b.dst, r.KeepResponse)
	}
	if b.field("stream") {
		b.dst = append(b.dst, "true"...)
	}
}

var (
	respPrefix    = []byte("response.")
	keyDelta      = []byte(`"delta":`)
	keyResponse   = []byte(`"response":`)
	keyID         = []byte(`"id":`)
	keyInTokens   = []byte(`"input_tokens":`)
	keyOutTokens  = []byte(`"output_tokens":`)
	valueMaxOut   = []byte(`"max_output_tokens"`)
	evOutputText  = []byte("output_text.delta")
	evRefusal     = []byte("refusal.delta")
	evReasoning   = []byte("reasoning")
	evDeltaSuffix = []byte(".delta")
	evToolArgs    = []byte("function_call_arguments.delta")
	evCompleted   = []byte("completed")
	evIncomplete  = []byte("incomplete")
	evFailed      = []byte("failed")
	evCreated     = []byte("created")
)

func (responsesProtocol) cutEndsComplete() {}

// scan reads one typed event by its type, read as JSON (typeFrom): vLLM
// writes it last, OpenAI first, a Python server with spaces.
func (responsesProtocol) scan(p []byte, c *chunk, _ *progress) {
	*c = chunk{}
	name, ok := bytes.CutPrefix(typeFrom(p, respPrefix), respPrefix)
	if !ok {
		// An error event ({"type":"error", ...}), or a bare error object
		// as a server that is shutting down may send.
		c.hasError = string(memberString(p, keyType)) == "error" || len(p) > 0 && bytes.HasPrefix(skipSpace(p[1:]), keyError)
		return
	}
	switch {
	case bytes.Equal(name, evOutputText), bytes.Equal(name, evRefusal):
		if d := bytes.Index(p, keyDelta); d >= 0 {
			if v := p[d+len(keyDelta):]; nonEmptyValue(v) {
				c.content, c.answer, c.answerTail = true, true, v
			}
		}
	case bytes.Equal(name, evToolArgs):
		if d := bytes.Index(p, keyDelta); d >= 0 && nonEmptyValue(p[d+len(keyDelta):]) {
			c.content, c.tool = true, true
		}
	case bytes.HasPrefix(name, evReasoning) && bytes.HasSuffix(name, evDeltaSuffix):
		if d := bytes.Index(p, keyDelta); d >= 0 && nonEmptyValue(p[d+len(keyDelta):]) {
			c.content, c.reasoning, c.reasoningTail = true, true, p[d+len(keyDelta):]
		}
	case bytes.Equal(name, evCompleted), bytes.Equal(name, evIncomplete):
		c.finished, c.terminal = true, true
		c.finishLength = bytes.Equal(name, evIncomplete) && bytes.Contains(p, valueMaxOut)
		responsesUsage(p, c)
		// llama.cpp's server adds its per-response timings beside the
		// response, as in its chat streams.
		if t := bytes.LastIndex(p, keyTimings); t >= 0 {
			readTimings(p[t+len(keyTimings):], c)
		}
	case bytes.Equal(name, evItemAdded):
		c.toolItem = string(memberString(objectAfter(p, keyItem), keyType)) == "function_call"
	case bytes.Equal(name, evFailed):
		c.hasError = true
	case bytes.Equal(name, evCreated):
		if r := bytes.Index(p, keyResponse); r >= 0 {
			if id := bytes.Index(p[r:], keyID); id >= 0 {
				c.responseID = stringValue(p[r+id+len(keyID):])
			}
		}
	}
}

// responsesUsage reads a finished response's usage: input_tokens,
// output_tokens and their details' cached_tokens and reasoning_tokens.
func responsesUsage(p []byte, c *chunk) {
	u := bytes.LastIndex(p, keyUsage)
	if u < 0 {
		return
	}
	v := skipSpace(p[u+len(keyUsage):])
	if len(v) == 0 || v[0] != '{' {
		return
	}
	readCounts(v, c, responsesKeys)
}

// text adds an output_text delta's text to dst.
func (responsesProtocol) text(dst, payload []byte) []byte {
	if name, _ := bytes.CutPrefix(typeFrom(payload, respPrefix), respPrefix); !bytes.Equal(name, evOutputText) {
		return dst
	}
	return appendStringAfter(dst, payload, keyDelta)
}
