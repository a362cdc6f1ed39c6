package transport

import (
	"bytes"
	"strconv"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

func init() { register("generate", generateProtocol{}) }

// generateProtocol is SGLang's native /generate: the prompt as text,
// sampling parameters apart, each event carrying the whole text so far
// and the counts under meta_info.
type generateProtocol struct{}

func (generateProtocol) appendBody(b *body, r *workload.Request, _ string) {
	if b.field("text") {
		b.dst = wire.AppendString(b.dst, r.Text())
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
	okOut := readCounts(m, c, generateKeys)
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

func (generateProtocol) keepCall(*record.Record, []byte) {}
