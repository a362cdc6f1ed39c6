package transport

import (
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

func init() { register("chat", chatProtocol{}) }

// chatProtocol is OpenAI's Chat Completions, /v1/chat/completions.
type chatProtocol struct{}

func (chatProtocol) appendBody(b *body, r *workload.Request, model string) {
	if b.field("model") {
		b.dst = wire.AppendString(b.dst, model)
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
	writeTools(b, r)
	openAIBody(b, r)
}

func (chatProtocol) scan(payload []byte, c *chunk, _ *progress) { scanChunk(payload, c) }
func (chatProtocol) text(dst, payload []byte) []byte            { return appendContent(dst, payload) }

func (chatProtocol) keepCall(rec *record.Record, payload []byte) { keepToolCall(rec, payload) }
