package server

import (
	"strconv"
	"strings"

	"github.com/kneebench/knee/workload/wire"
)

// A Responses API stream, as vLLM writes it: each event an "event: TYPE"
// line and a data line whose JSON object ends with its sequence number
// and type; response.created and response.in_progress first; a reasoning
// item's reasoning_text deltas, then a message item's output_text deltas,
// each item opened (output_item.added) and closed (*.done,
// output_item.done); response.completed with the usage last, and no
// [DONE]. An answer cut by max_output_tokens ends as one that finished:
// response.completed, status "completed", no incomplete_details, as
// vLLM's serving_responses.py does for every model but gpt-oss
// ("completed" is its catch-all status), and llama-server and
// llm-d-inference-sim too; OpenAI's response.incomplete is not sent.

// respStream is what a Responses stream writes from event to event.
type respStream struct {
	r   *run
	seq int
	// item is the output item open: 0 none, 1 the reasoning, 2 the
	// message; index is its output_index.
	item, index int
	thought     []byte
}

// respID is the response's id, and rsID and msgID its items'.
func (r *run) respID() string { return "resp_knee-" + strconv.FormatInt(r.id, 10) }
func (r *run) rsID() string   { return "rs_knee-" + strconv.FormatInt(r.id, 10) }
func (r *run) msgID() string  { return "msg_knee-" + strconv.FormatInt(r.id, 10) }
func (r *run) fcID() string   { return "fc_knee-" + strconv.FormatInt(r.id, 10) }
func (r *run) callID() string { return "call_knee-" + strconv.FormatInt(r.id, 10) }

// Output items: kinds of respStream.item.
const (
	itemNone = iota
	itemReasoning
	itemMessage
	itemCall
)

// event appends one event to b: fields are its JSON members before the
// sequence number.
func (w *respStream) event(b []byte, typ string, fields func([]byte) []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {"...)
	if fields != nil {
		b = fields(b)
		b = append(b, ',')
	}
	b = append(b, `"sequence_number":`...)
	b = strconv.AppendInt(b, int64(w.seq), 10)
	w.seq++
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	return append(b, "\"}\n\n"...)
}

// response appends the response object of created, in_progress and the
// end, with the output so far and the usage at the end.
func (w *respStream) response(b []byte, status string, end bool, info StreamInfo) []byte {
	r := w.r
	b = append(b, `"response":{"id":"`...)
	b = append(b, r.respID()...)
	b = append(b, `","created_at":`...)
	b = strconv.AppendInt(b, r.s.created, 10)
	b = append(b, `,"incomplete_details":null`...)
	b = append(b, `,"model":`...)
	b = wire.AppendString(b, r.model)
	b = append(b, `,"object":"response","output":[`...)
	if end {
		b = w.output(b)
	}
	b = append(b, `],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"status":"`...)
	b = append(b, status...)
	b = append(b, `","usage":`...)
	if !end {
		return append(b, "null}"...)
	}
	p, c, th := r.plan.PromptTokens, r.emitted, min(r.thinking, r.emitted)
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(info.CachedTokens), 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(c), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(th), 10)
	b = append(b, `},"total_tokens":`...)
	b = strconv.AppendInt(b, int64(p+c), 10)
	return append(b, "}}"...)
}

// output appends the finished items: the reasoning, then the message.
func (w *respStream) output(b []byte) []byte {
	r := w.r
	if len(w.thought) > 0 {
		b = w.reasoningItem(b)
		if r.emitted > r.thinking {
			b = append(b, ',')
		}
	}
	switch {
	case r.emitted > r.thinking && r.plan.ToolName != "":
		b = w.callItem(b, "completed")
	case r.emitted > r.thinking:
		b = w.messageItem(b)
	}
	return b
}

// reasoningItem appends the finished reasoning item.
func (w *respStream) reasoningItem(b []byte) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, w.r.rsID()...)
	b = append(b, `","summary":[],"type":"reasoning","content":[{"text":`...)
	b = wire.AppendString(b, string(w.thought))
	return append(b, `,"type":"reasoning_text"}],"status":"completed"}`...)
}

// messageItem appends the finished message item.
func (w *respStream) messageItem(b []byte) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, w.r.msgID()...)
	b = append(b, `","content":[{"annotations":[],"text":`...)
	b = wire.AppendString(b, string(w.r.text))
	return append(b, `,"type":"output_text","logprobs":null}],"role":"assistant","status":"completed","type":"message"}`...)
}

// open starts output item kind (1 reasoning, 2 message), closing the one
// open before it.
func (w *respStream) open(b []byte, kind int) []byte {
	b = w.close(b)
	r := w.r
	w.item = kind
	if kind == itemCall {
		return w.event(b, "response.output_item.added", func(b []byte) []byte {
			b = append(b, `"item":`...)
			b = w.callItem(b, "in_progress")
			b = append(b, `,"output_index":`...)
			return strconv.AppendInt(b, int64(w.index), 10)
		})
	}
	if kind == 1 {
		return w.event(b, "response.output_item.added", func(b []byte) []byte {
			b = append(b, `"item":{"id":"`...)
			b = append(b, r.rsID()...)
			b = append(b, `","summary":[],"type":"reasoning","content":null,"status":"in_progress"},"output_index":`...)
			return strconv.AppendInt(b, int64(w.index), 10)
		})
	}
	b = w.event(b, "response.output_item.added", func(b []byte) []byte {
		b = append(b, `"item":{"id":"`...)
		b = append(b, r.msgID()...)
		b = append(b, `","content":[],"role":"assistant","status":"in_progress","type":"message"},"output_index":`...)
		return strconv.AppendInt(b, int64(w.index), 10)
	})
	return w.event(b, "response.content_part.added", func(b []byte) []byte {
		b = append(b, `"content_index":0,"item_id":"`...)
		b = append(b, r.msgID()...)
		b = append(b, `","output_index":`...)
		b = strconv.AppendInt(b, int64(w.index), 10)
		return append(b, `,"part":{"annotations":[],"text":"","type":"output_text","logprobs":null}`...)
	})
}

// close ends the open item, with its whole text.
func (w *respStream) close(b []byte) []byte {
	r := w.r
	item := func(b []byte, id string) []byte {
		b = append(b, `"item_id":"`...)
		b = append(b, id...)
		b = append(b, `","output_index":`...)
		return strconv.AppendInt(b, int64(w.index), 10)
	}
	switch w.item {
	case 1:
		b = w.event(b, "response.reasoning_text.done", func(b []byte) []byte {
			b = append(b, `"content_index":0,`...)
			b = item(b, r.rsID())
			b = append(b, `,"text":`...)
			return wire.AppendString(b, string(w.thought))
		})
	case 2:
		b = w.event(b, "response.output_text.done", func(b []byte) []byte {
			b = append(b, `"content_index":0,`...)
			b = item(b, r.msgID())
			b = append(b, `,"logprobs":[],"text":`...)
			return wire.AppendString(b, string(r.text))
		})
		b = w.event(b, "response.content_part.done", func(b []byte) []byte {
			b = append(b, `"content_index":0,`...)
			return item(b, r.msgID())
		})
	case itemCall:
		b = w.event(b, "response.function_call_arguments.done", func(b []byte) []byte {
			b = append(b, `"arguments":`...)
			b = wire.AppendString(b, string(r.text))
			b = append(b, ',')
			return item(b, r.fcID())
		})
	default:
		return b
	}
	// As vLLM does, the finished item whole.
	b = w.event(b, "response.output_item.done", func(b []byte) []byte {
		b = append(b, `"item":`...)
		switch w.item {
		case itemReasoning:
			b = w.reasoningItem(b)
		case itemMessage:
			b = w.messageItem(b)
		default:
			b = w.callItem(b, "completed")
		}
		b = append(b, `,"output_index":`...)
		return strconv.AppendInt(b, int64(w.index), 10)
	})
	w.item = 0
	w.index++
	return b
}

// token appends token i's delta event, opening its item first when it is
// the item's first.
func (w *respStream) token(b []byte, i int) []byte {
	r := w.r
	tok := r.plan.Tokens[i]
	typ, id := "response.output_text.delta", r.msgID()
	if i < r.thinking {
		if w.item != 1 {
			b = w.open(b, 1)
		}
		typ, id = "response.reasoning_text.delta", r.rsID()
		w.thought = append(w.thought, tok...)
	} else if r.plan.ToolName != "" {
		if w.item != itemCall {
			b = w.open(b, itemCall)
		}
		r.text = append(r.text, tok...)
		return w.event(b, "response.function_call_arguments.delta", func(b []byte) []byte {
			b = append(b, `"delta":`...)
			b = wire.AppendString(b, tok)
			b = append(b, `,"item_id":"`...)
			b = append(b, r.fcID()...)
			b = append(b, `","output_index":`...)
			return strconv.AppendInt(b, int64(w.index), 10)
		})
	} else {
		if w.item != 2 {
			b = w.open(b, 2)
		}
		r.text = append(r.text, tok...)
	}
	return w.event(b, typ, func(b []byte) []byte {
		b = append(b, `"content_index":0,"delta":`...)
		b = wire.AppendString(b, tok)
		b = append(b, `,"item_id":"`...)
		b = append(b, id...)
		if typ == "response.output_text.delta" {
			b = append(b, `","logprobs":[],"output_index":`...)
		} else {
			b = append(b, `","output_index":`...)
		}
		return strconv.AppendInt(b, int64(w.index), 10)
	})
}

// responsesAnswer writes a Responses API answer (see respStream): the
// opening events at once, so headers go out as vLLM sends them; each
// token's delta, grouped with the tokens due with it; the end; and the
// conversation stored for a later previous_response_id when asked.
type responsesAnswer struct{}

func init() {
	register("responses", func(s *Server, b []byte) (*decoded, error) {
		d, err := decodeResponses(b)
		if err == nil {
			err = s.continueFrom(d)
		}
		return d, err
	}, responsesAnswer{})
}

func (responsesAnswer) open(r *run) {
	r.setThinking()
	r.resp = &respStream{r: r}
	w := r.resp
	r.event = make([]byte, chunkRoom, 1024)
	r.buf = w.event(r.buf, "response.created", func(b []byte) []byte { return w.response(b, "in_progress", false, StreamInfo{}) })
	r.buf = w.event(r.buf, "response.in_progress", func(b []byte) []byte { return w.response(b, "in_progress", false, StreamInfo{}) })
}

func (responsesAnswer) token(r *run, i int) []byte {
	r.event = r.resp.token(r.event[:chunkRoom], i)
	return r.event
}

// close ends the open item and the response with response.completed,
// cut or not (respStream); then keeps the conversation when asked.
func (responsesAnswer) close(r *run, info StreamInfo) {
	w := r.resp
	r.buf = w.close(r.buf)
	r.buf = w.event(r.buf, "response.completed", func(b []byte) []byte { return w.response(b, "completed", true, info) })
	r.keep()
}

func (responsesAnswer) shutdown(r *run) {
	r.buf = r.resp.event(r.buf, "error", func(b []byte) []byte {
		return append(b, `"code":"service_unavailable","message":"the server is shutting down","param":null`...)
	})
}

func (responsesAnswer) body(r *run, info StreamInfo) []byte { return r.unaryResponse(info) }

// keep stores the conversation with its answer, when the request asked.
func (r *run) keep() {
	if !r.store {
		return
	}
	conv := append(append([]Message(nil), r.messages...), Message{Role: "assistant", Text: strings.Clone(string(r.text))})
	r.s.stored.put(r.respID(), conv)
}

// setThinking is how many of the answer's first tokens are thought.
func (r *run) setThinking() {
	if spec := r.reasoning; spec != nil {
		r.thinking = min(r.plan.ThoughtTokens, len(r.plan.Tokens))
	}
}

// unaryResponse is the whole response object of an unstreamed Responses
// answer, once its tokens (all in r.text) have run.
func (r *run) unaryResponse(info StreamInfo) []byte {
	r.setThinking()
	w := &respStream{r: r}
	th := min(r.thinking, r.emitted)
	w.thought = []byte(strings.Join(r.plan.Tokens[:th], ""))
	r.text = []byte(strings.Join(r.plan.Tokens[th:r.emitted], ""))
	b := w.response(nil, "completed", true, info)
	b = b[len(`"response":`):]
	r.keep()
	return b
}

// callItem appends the answer's function_call item with its status.
func (w *respStream) callItem(b []byte, status string) []byte {
	r := w.r
	b = append(b, `{"arguments":`...)
	if status == "completed" {
		b = wire.AppendString(b, string(r.text))
	} else {
		b = append(b, `""`...)
	}
	b = append(b, `,"call_id":"`...)
	b = append(b, r.callID()...)
	b = append(b, `","name":`...)
	b = wire.AppendString(b, r.plan.ToolName)
	b = append(b, `,"type":"function_call","id":"`...)
	b = append(b, r.fcID()...)
	b = append(b, `","status":"`...)
	b = append(b, status...)
	return append(b, `"}`...)
}
