package server

import (
	"strconv"
	"strings"

	"github.com/kneebench/knee/workload/wire"
)

// openAIAnswer writes OpenAI's Chat Completions (chat) and Completions
// answers, as vLLM does: a chunk a token, the role chunk first, the
// finish chunk, the usage chunk when asked, and [DONE].
type openAIAnswer struct{}

func (r *run) idString() string {
	if r.chat {
		return "chatcmpl-knee-" + strconv.FormatInt(r.id, 10)
	}
	return "cmpl-knee-" + strconv.FormatInt(r.id, 10)
}

// The bytes after a token's text close its event. They are constants, not
// per-request copies: read on every token of every stream, one shared copy
// stays in the cache.
const (
	chatSuffix = "},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
	textSuffix = ",\"logprobs\":null,\"finish_reason\":null}]}\n\n"
)

// chunkEnvelope builds the bytes around a token, once per request, so the
// per-token path only escapes the token itself.
func (r *run) chunkEnvelope() {
	head := `data: {"id":"` + r.idString() + `","object":"`
	if r.chat {
		head += `chat.completion.chunk","created":` + strconv.FormatInt(r.s.created, 10) + `,"model":` + jsonString(r.model) +
			`,"choices":[{"index":0,"delta":{"content":`
		r.suffix = chatSuffix
	} else {
		head += `text_completion","created":` + strconv.FormatInt(r.s.created, 10) + `,"model":` + jsonString(r.model) +
			`,"choices":[{"index":0,"text":`
		r.suffix = textSuffix
	}
	r.prefix = []byte(head)
	// Both buffers keep chunkRoom free in front for the chunk's size line.
	r.event = append(make([]byte, chunkRoom, chunkRoom+len(head)+len(r.suffix)+64), head...)
	r.buf = make([]byte, chunkRoom, 512)
	r.thinkEnvelope()
	r.toolEnvelope()
}

// tokenEvent formats one token's event in r.event and returns it, with
// chunkRoom free in front. The event buffer keeps its prefix from token to
// token, so only the token and the suffix are copied in.
func (r *run) tokenEvent(tok string) []byte {
	e := wire.AppendString(r.event[:chunkRoom+len(r.prefix)], tok)
	e = append(e, r.suffix...)
	r.event = e
	return e
}

// The shutdown event ends a stream cut by the end of a shutdown's grace.
func (openAIAnswer) shutdown(r *run) { r.buf = append(r.buf, shutdownEvent...) }

// open writes the role chunk (chat) or an empty text chunk.
func (openAIAnswer) open(r *run) {
	r.chunkEnvelope()
	r.buf = append(r.buf, r.prefix...)
	if r.chat {
		// Replace the content delta with the role delta for the first chunk.
		r.buf = r.buf[:len(r.buf)-len(`"content":`)]
		r.buf = append(r.buf, `"role":"assistant","content":""`...)
	} else {
		r.buf = append(r.buf, `""`...)
	}
	r.buf = append(r.buf, r.suffix...)
}

// token is a thought's, a tool call's or the answer's chunk.
func (openAIAnswer) token(r *run, i int) []byte {
	switch {
	case i < r.thinking:
		return r.thinkTokenEvent(r.plan.Tokens[i])
	case r.plan.ToolName != "" && r.chat:
		return r.toolTokenEvent(r.plan.Tokens[i], i == r.thinking)
	}
	return r.tokenEvent(r.plan.Tokens[i])
}

// close writes the finish chunk, the usage chunk when asked, and [DONE].
func (openAIAnswer) close(r *run, info StreamInfo) {
	r.buf = append(r.buf, r.prefix...)
	if r.chat {
		r.buf = r.buf[:len(r.buf)-len(`"content":`)]
		r.buf = append(r.buf, "},\"logprobs\":null,\"finish_reason\":"...)
	} else {
		r.buf = append(r.buf, "\"\",\"logprobs\":null,\"finish_reason\":"...)
	}
	r.buf = wire.AppendString(r.buf, r.plan.FinishReason)
	r.buf = append(r.buf, "}]}\n\n"...)
	if r.includeUsage {
		r.buf = append(r.buf, "data: "...)
		r.buf = r.appendHead(r.buf, "chat.completion.chunk")
		r.buf = append(r.buf, `,"choices":[],"usage":`...)
		r.buf = r.appendUsage(r.buf, info)
		r.buf = append(r.buf, "}\n\n"...)
	}
	r.buf = append(r.buf, "data: [DONE]\n\n"...)
}

// body is a chat.completion or text_completion object.
func (openAIAnswer) body(r *run, info StreamInfo) []byte {
	r.setThinking() // the usage counts the thought, as the stream's does
	b := r.appendHead(nil, "chat.completion")
	if r.chat {
		b = append(b, `,"choices":[{"index":0,"message":`...)
		b = r.appendChatMessage(b)
		b = append(b, `,"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":`...)
		b = wire.AppendString(b, string(r.text))
		b = append(b, `,"logprobs":null,"finish_reason":`...)
	}
	b = wire.AppendString(b, r.plan.FinishReason)
	b = append(b, `}],"usage":`...)
	b = r.appendUsage(b, info)
	return append(b, '}')
}

// appendChatMessage is a non-streamed chat answer's message as vLLM
// writes it: the thought in the model's reasoning field, then the text as
// content (null when the thought took every token: its reasoning parsers
// find no content without the thought's end), or, for a tool call,
// content null and the call in tool_calls (its arguments the answer's
// text).
func (r *run) appendChatMessage(b []byte) []byte {
	n := min(r.emitted, len(r.plan.Tokens))
	think := min(r.thinking, n) // body set it
	answer := strings.Join(r.plan.Tokens[think:n], "")
	b = append(b, `{"role":"assistant"`...)
	if think > 0 {
		b = append(b, `,"`...)
		b = append(b, r.reasoning.StreamField()...)
		b = append(b, `":`...)
		b = wire.AppendString(b, strings.Join(r.plan.Tokens[:think], ""))
	}
	if r.plan.ToolName != "" && r.plan.FinishReason == "tool_calls" {
		b = append(b, `,"content":null,"tool_calls":[{"id":"`...)
		b = append(b, r.toolCallID()...)
		b = append(b, `","type":"function","function":{"name":`...)
		b = wire.AppendString(b, r.plan.ToolName)
		b = append(b, `,"arguments":`...)
		b = wire.AppendString(b, answer)
		return append(b, `}}]}`...)
	}
	b = append(b, `,"content":`...)
	if think > 0 && answer == "" {
		return append(b, "null}"...)
	}
	b = wire.AppendString(b, answer)
	return append(b, '}')
}

// appendHead opens a response object: id, object, created and model. The
// chat object name is given; completions always use text_completion.
func (r *run) appendHead(b []byte, chatObject string) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, r.idString()...)
	b = append(b, `","object":"`...)
	if r.chat {
		b = append(b, chatObject...)
	} else {
		b = append(b, "text_completion"...)
	}
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, r.s.created, 10)
	b = append(b, `,"model":`...)
	return wire.AppendString(b, r.model)
}

func (r *run) appendUsage(b []byte, info StreamInfo) []byte {
	p, c := r.plan.PromptTokens, r.emitted
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(c), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(p+c), 10)
	b = r.appendReasoningUsage(b)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(info.CachedTokens), 10)
	return append(b, "}}"...)
}
