package transport

import (
	"bytes"
	"fmt"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

func init() { register("embeddings", embeddingsProtocol{}) }

// embeddingsProtocol is OpenAI's /v1/embeddings, as vLLM serves it for a
// pooling model: input as one text or a batch, a list of vectors back.
type embeddingsProtocol struct{}

func (embeddingsProtocol) appendBody(b *body, r *workload.Request, model string) {
	if b.field("model") {
		b.dst = wire.AppendString(b.dst, model)
	}
	if b.field("input") {
		if len(r.Inputs) == 0 {
			b.dst = wire.AppendString(b.dst, r.Text())
		} else {
			b.dst = appendStrings(b.dst, r.Inputs)
		}
	}
	if b.field("encoding_format") {
		b.dst = append(b.dst, `"float"`...)
	}
}

var (
	keyEmbedding = []byte(`"embedding":`)
	keyData      = []byte(`"data":`)
)

// readAnswer checks an embeddings answer: one vector per input, every
// one of the same, non-zero dimension, and usage.prompt_tokens. It
// counts each vector's numbers by their commas, without parsing them.
func (embeddingsProtocol) readAnswer(b []byte, r *workload.Request, rec *record.Record) error {
	if !bytes.Contains(b, keyData) {
		return fmt.Errorf("the answer has no data list: %.120q", b)
	}
	want, dim, n := inputsOf(r), 0, 0
	for rest := b; ; {
		i := bytes.Index(rest, keyEmbedding)
		if i < 0 {
			break
		}
		v := skipSpace(rest[i+len(keyEmbedding):])
		if len(v) == 0 || v[0] != '[' {
			return fmt.Errorf("embedding %d is not a list of numbers (knee asks for encoding_format float)", n)
		}
		end := bytes.IndexByte(v, ']')
		if end < 0 {
			return fmt.Errorf("embedding %d never ends", n)
		}
		d := 0
		if len(bytes.TrimSpace(v[1:end])) > 0 {
			d = bytes.Count(v[1:end], []byte{','}) + 1
		}
		switch {
		case d == 0:
			return fmt.Errorf("embedding %d is empty", n)
		case n > 0 && d != dim:
			return fmt.Errorf("embedding %d has %d dimensions, the first %d", n, d, dim)
		}
		dim = d
		n++
		rest = v[end:]
	}
	if n != want {
		return fmt.Errorf("%d embeddings for %d inputs", n, want)
	}
	rec.Dimensions = dim
	readPromptUsage(b, rec)
	return nil
}
