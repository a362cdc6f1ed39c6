package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/kneebench/knee/workload/wire"
)

// SGLang's native /generate: the prompt is "text" (not messages), the
// sampling parameters sit under "sampling_params", and every streamed
// event carries the whole text so far with the counts under "meta_info".

// generateRequest is /generate's body, as SGLang reads it.
type generateRequest struct {
	Text           *string         `json:"text"`
	InputIDs       json.RawMessage `json:"input_ids"`
	Model          *string         `json:"model"`
	Stream         *bool           `json:"stream"`
	SamplingParams *struct {
		MaxNewTokens *int            `json:"max_new_tokens"`
		IgnoreEOS    *bool           `json:"ignore_eos"`
		Stop         json.RawMessage `json:"stop"`
		Temperature  *float64        `json:"temperature"`
	} `json:"sampling_params"`
}

// decodeGenerate parses and validates a /generate body; a request that
// names no model takes the server's first.
func (s *Server) decodeGenerate(body []byte) (*decoded, error) {
	if !utf8.Valid(body) {
		return nil, badRequest("", "the request body is not valid UTF-8")
	}
	var r generateRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&r); err != nil {
		return nil, badRequest("", "the request body is not a /generate request: %v", err)
	}
	if len(r.InputIDs) > 0 && string(r.InputIDs) != "null" {
		return nil, badRequest("input_ids", "the simulator reads prompts as text: send \"text\", not input_ids")
	}
	if r.Text == nil {
		return nil, badRequest("text", "a /generate request needs \"text\"")
	}
	d := &decoded{Gen: GenRequest{Prompt: *r.Text}, IncludeUsage: true}
	d.Model = s.order[0]
	if r.Model != nil && *r.Model != "" {
		d.Model = *r.Model
	}
	d.Gen.Model = d.Model
	d.Stream = r.Stream != nil && *r.Stream
	if sp := r.SamplingParams; sp != nil {
		if sp.MaxNewTokens != nil {
			if *sp.MaxNewTokens < 0 {
				return nil, badRequest("sampling_params.max_new_tokens", "max_new_tokens must not be negative")
			}
			d.Gen.MaxTokens = sp.MaxNewTokens
		}
		d.Gen.IgnoreEOS = sp.IgnoreEOS != nil && *sp.IgnoreEOS
		stop, err := decodeStop(sp.Stop)
		if err != nil {
			return nil, err
		}
		d.Gen.Stop = stop
		if t := sp.Temperature; t != nil && (*t < 0 || *t > 2) {
			return nil, badRequest("sampling_params.temperature", "temperature must be between 0 and 2")
		}
	}
	return d, nil
}

// appendGenerateEvent writes one /generate event: the text so far and
// meta_info. finish is "" while the answer goes on.
func (r *run) appendGenerateEvent(b []byte, finish string, cached int) []byte {
	b = append(b, `data: {"text":`...)
	b = wire.AppendString(b, string(r.text))
	b = append(b, `,"meta_info":{"id":"`...)
	b = strconv.AppendInt(b, r.id, 16)
	b = append(b, `","finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"type":`...)
		b = wire.AppendString(b, finish)
		if finish == "length" {
			b = append(b, `,"length":`...)
			b = strconv.AppendInt(b, int64(r.emitted), 10)
		}
		b = append(b, '}')
	}
	b = append(b, `,"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(r.plan.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(r.emitted), 10)
	b = append(b, `,"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(cached), 10)
	return append(b, "},\"index\":0}\n\n"...)
}

// generateAnswer writes SGLang's /generate answer: an event per token
// with the whole text so far, then one more with the finish reason and
// the final counts (the prefix-cache hit is known only at the end here),
// and [DONE].
type generateAnswer struct{}

func init() { register("generate", (*Server).decodeGenerate, generateAnswer{}) }

func (generateAnswer) open(r *run) { r.event = make([]byte, chunkRoom, 512) }

func (generateAnswer) token(r *run, i int) []byte {
	r.text = append(r.text, r.plan.Tokens[i]...)
	r.event = r.appendGenerateEvent(r.event[:chunkRoom], "", 0)
	return r.event
}

func (generateAnswer) close(r *run, info StreamInfo) {
	r.buf = r.appendGenerateEvent(r.buf, r.plan.FinishReason, info.CachedTokens)
	r.buf = append(r.buf, "data: [DONE]\n\n"...)
}

// shutdown says nothing: SGLang's stream just ends.
func (generateAnswer) shutdown(*run) {}

func (generateAnswer) body(r *run, info StreamInfo) []byte { return r.unaryGenerate(info) }

// unaryGenerate writes an unstreamed /generate answer.
func (r *run) unaryGenerate(info StreamInfo) []byte {
	b := append([]byte(nil), `{"text":`...)
	b = wire.AppendString(b, string(r.text))
	ev := r.appendGenerateEvent(nil, r.plan.FinishReason, info.CachedTokens)
	if i := bytes.Index(ev, []byte(`"meta_info":`)); i >= 0 {
		b = append(b, ',')
		b = append(b, bytes.TrimSuffix(ev[i:], []byte(",\"index\":0}\n\n"))...)
	}
	return append(b, '}')
}
