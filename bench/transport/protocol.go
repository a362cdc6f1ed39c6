package transport

import (
	"bytes"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/kneebench/knee/workload"
)

// Endpoint names the API a target speaks.
type Endpoint string

// The APIs knee speaks.
const (
	// EndpointChat is OpenAI's /v1/chat/completions.
	EndpointChat Endpoint = "chat"
	// EndpointCompletions is OpenAI's /v1/completions.
	EndpointCompletions Endpoint = "completions"
	// EndpointGenerate is SGLang's native /generate: the prompt as text,
	// sampling parameters apart, each event carrying the whole text so far
	// and the counts under meta_info.
	EndpointGenerate Endpoint = "generate"
	// EndpointResponses is OpenAI's Responses API, /v1/responses: the
	// messages as input items, a typed event stream.
	EndpointResponses Endpoint = "responses"
	// EndpointEmbeddings is OpenAI's /v1/embeddings, served by pooling
	// models: no stream, the latency the whole answer's.
	EndpointEmbeddings Endpoint = "embeddings"
	// EndpointRerank is vLLM's (and Jina's, Cohere's) /v1/rerank: a
	// query and documents, a score for each.
	EndpointRerank Endpoint = "rerank"
	// EndpointScore is vLLM's /v1/score: a query scored against each
	// document.
	EndpointScore Endpoint = "score"
)

// Endpoints lists them, for help and errors.
var Endpoints = []Endpoint{EndpointChat, EndpointCompletions, EndpointGenerate, EndpointResponses, EndpointEmbeddings, EndpointRerank, EndpointScore}

// Chat says the endpoint takes messages, which the server lays out with
// the model's chat template (the default, also ""; the Responses API's
// input items too).
func (e Endpoint) Chat() bool { return e == "" || e == EndpointChat || e == EndpointResponses }

// Pooled says the endpoint's answer is one body, not a stream: a
// pooling model's (embeddings), with no tokens generated, whose latency
// is the whole answer's.
func (e Endpoint) Pooled() bool { return e == EndpointEmbeddings || e.Pairs() }

// Pairs says the endpoint scores a query against documents (rerank,
// score): each pair one input.
func (e Endpoint) Pairs() bool { return e == EndpointRerank || e == EndpointScore }

// SendsText says the endpoint takes the prompt as one text, the
// messages' contents joined (completions, and SGLang's /generate): a
// request whose contents are empty sends an empty prompt.
func (e Endpoint) SendsText() bool { return !e.Chat() }

// protocol is what changes from one API to another: where a request goes,
// its body, and how an event of its stream reads. Everything else (the
// connection, the SSE framing, the timing, the error classes) is shared.
type protocol interface {
	// uri is the request URL under the target's base URL.
	uri(base string) string
	// appendBody writes the request's fields into b.
	appendBody(b *body, r *workload.Request, model string)
	// scan reads one event's data into c; p carries what the stream's
	// earlier events said.
	scan(payload []byte, c *chunk, p *progress)
	// text adds an event's generated text to dst (kept for a call's
	// history).
	text(dst, payload []byte) []byte
}

// progress is what a protocol remembers from event to event of a stream.
type progress struct {
	// completion is the completion count the last event reported
	// (cumulative protocols say how far they are, not what is new).
	completion int
}

func protocolFor(e Endpoint) (protocol, error) {
	switch e {
	case "", EndpointChat:
		return chatProtocol{}, nil
	case EndpointCompletions:
		return completionsProtocol{}, nil
	case EndpointGenerate:
		return generateProtocol{}, nil
	case EndpointResponses:
		return responsesProtocol{}, nil
	case EndpointEmbeddings:
		return embeddingsProtocol{}, nil
	case EndpointRerank:
		return rerankProtocol{}, nil
	case EndpointScore:
		return scoreProtocol{}, nil
	}
	return nil, fmt.Errorf("endpoint must be chat, completions, generate, responses, embeddings, rerank or score, got %q", e)
}

// openAIBody writes what both OpenAI APIs share after the prompt.
func openAIBody(b *body, r *workload.Request) {
	if r.MaxTokens > 0 && b.field("max_tokens") {
		b.dst = strconv.AppendInt(b.dst, int64(r.MaxTokens), 10)
	}
	if (r.IgnoreEOS || b.ignoreEOS) && b.field("ignore_eos") {
		b.dst = append(b.dst, "true"...)
	}
	if b.field("stream") {
		b.dst = append(b.dst, "true"...)
	}
	if b.field("stream_options") {
		b.dst = append(b.dst, `{"include_usage":true}`...)
	}
}

type chatProtocol struct{}

func (chatProtocol) uri(base string) string { return joinURL(base, "/chat/completions") }

func (chatProtocol) appendBody(b *body, r *workload.Request, model string) {
	if b.field("model") {
		b.dst = appendJSONString(b.dst, model)
	}
	if b.field("messages") {
		b.dst = append(b.dst, '[')
		for i, m := range r.Messages {
			if i > 0 {
				b.dst = append(b.dst, ',')
			}
			b.dst = appendChatMessage(b.dst, m)
		}
		b.dst = append(b.dst, ']')
	}
	writeTools(b, r, false)
	openAIBody(b, r)
}

func (chatProtocol) scan(payload []byte, c *chunk, _ *progress) { scanChunk(payload, c) }
func (chatProtocol) text(dst, payload []byte) []byte            { return appendContent(dst, payload) }

type completionsProtocol struct{}

func (completionsProtocol) uri(base string) string { return joinURL(base, "/completions") }

func (completionsProtocol) appendBody(b *body, r *workload.Request, model string) {
	if b.field("model") {
		b.dst = appendJSONString(b.dst, model)
	}
	if b.field("prompt") {
		b.dst = appendJSONString(b.dst, r.Text())
	}
	openAIBody(b, r)
}

func (completionsProtocol) scan(payload []byte, c *chunk, _ *progress) { scanChunk(payload, c) }
func (completionsProtocol) text(dst, payload []byte) []byte            { return appendContent(dst, payload) }

type generateProtocol struct{}

// uri is the server's root /generate: SGLang serves its native API beside
// /v1, not under it.
func (generateProtocol) uri(base string) string {
	u, err := url.Parse(base)
	if err == nil {
		u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1")
		return joinURL(u.String(), "/generate")
	}
	return joinURL(base, "/generate")
}

func (generateProtocol) appendBody(b *body, r *workload.Request, _ string) {
	if b.field("text") {
		b.dst = appendJSONString(b.dst, r.Text())
	}
	if b.field("sampling_params") {
		b.dst = append(b.dst, '{')
		if r.MaxTokens > 0 {
			b.dst = append(b.dst, `"max_new_tokens":`...)
			b.dst = strconv.AppendInt(b.dst, int64(r.MaxTokens), 10)
			b.dst = append(b.dst, ',')
		}
		b.dst = append(b.dst, `"ignore_eos":`...)
		b.dst = strconv.AppendBool(b.dst, r.IgnoreEOS || b.ignoreEOS)
		b.dst = append(b.dst, '}')
	}
	if b.field("stream") {
		b.dst = append(b.dst, "true"...)
	}
}

var (
	keyMetaInfo = []byte(`"meta_info":`)
	keyGenText  = []byte(`"text":`)
)

// scan reads a /generate event: every event has the whole text so far and
// meta_info with the counts; an event is a content chunk when its
// completion count grew, and the answer is over when finish_reason is no
// longer null.
func (generateProtocol) scan(payload []byte, c *chunk, p *progress) {
	*c = chunk{}
	i := bytes.Index(payload, keyMetaInfo)
	if bytes.Contains(payload, keyError) && i < 0 {
		c.hasError = true
		return
	}
	if i < 0 {
		return
	}
	m := skipSpace(payload[i+len(keyMetaInfo):])
	if len(m) == 0 || m[0] != '{' {
		return
	}
	c.usage = true
	var ok bool
	if c.promptTokens, ok = intAfter(m, keyPrompt); !ok && bytes.Contains(m, keyPrompt) {
		c.promptOdd, c.promptRaw = true, rawAfter(m, keyPrompt)
	} else if c.promptTokens > MaxPlausiblePromptTokens {
		c.promptOdd, c.promptRaw, c.promptTokens = true, rawAfter(m, keyPrompt), 0
	}
	var okOut bool
	c.outTokens, okOut = intAfter(m, keyCompl)
	c.usageOdd = !okOut && bytes.Contains(m, keyCompl)
	c.cachedTokens, c.cachedSeen = intAfter(m, keyCached)
	if f := bytes.Index(m, keyFinish); f >= 0 {
		v := skipSpace(m[f+len(keyFinish):])
		c.finished = len(v) > 0 && (v[0] == '{' || v[0] == '"')
	}
	if okOut && c.outTokens > p.completion {
		c.content = true
		p.completion = c.outTokens
	}
}

// text replaces dst with the event's whole text so far (its first "text"
// key: the event's own, ahead of meta_info).
func (generateProtocol) text(dst, payload []byte) []byte {
	i := bytes.Index(payload, keyGenText)
	if i < 0 {
		return dst
	}
	return appendContent(dst[:0], payload[i:])
}
