package transport

import (
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

func init() { register("completions", completionsProtocol{}) }

// completionsProtocol is OpenAI's Completions, /v1/completions: the
// prompt as one text.
type completionsProtocol struct{}

func (completionsProtocol) appendBody(b *body, r *workload.Request, model string) {
	if b.field("model") {
		b.dst = wire.AppendString(b.dst, model)
	}
	if b.field("prompt") {
		b.dst = wire.AppendString(b.dst, r.Text())
	}
	openAIBody(b, r)
}

func (completionsProtocol) scan(payload []byte, c *chunk, _ *progress) { scanChunk(payload, c) }
func (completionsProtocol) text(dst, payload []byte) []byte            { return appendContent(dst, payload) }

func (completionsProtocol) keepCall(*record.Record, []byte) {}
