package transport

import (
	"bytes"
	"fmt"
	"io"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

// pooledProtocol is an API whose answer is one JSON body, not a stream:
// a pooling model's (embeddings). Its latency is the whole answer's.
type pooledProtocol interface {
	protocol
	// readAnswer checks a 200 answer's body against the request r and
	// fills rec's counts; an answer of the wrong shape is an error.
	readAnswer(body []byte, r *workload.Request, rec *record.Record) error
}

// readPooled reads a pooled answer whole: the request's one chunk is the
// end of its body, so TTFT and E2E are the same instant and ITL has no
// gaps. size is its length as the server gave it (-1: not given).
func (c *Client) readPooled(p pooledProtocol, body io.Reader, size int, r *workload.Request, rec *record.Record, fail func(string, error)) {
	b, release, err := c.readWhole(body, size, MaxAnswerBytes)
	defer release()
	if err != nil {
		fail(c.wholeClass(err, rec), err)
		return
	}
	t := c.Now()
	rec.Pooled, rec.Inputs = true, inputsOf(r) // (rerank counts its documents)
	if err := p.readAnswer(b, r, rec); err != nil {
		fail(record.ClassMalformed, err)
		return
	}
	rec.FirstToken, rec.LastToken, rec.Chunks = t, t, 1
	rec.ChunkTimes = append(rec.ChunkTimes, t)
}

// inputsOf is how many inputs a pooled request carries.
func inputsOf(r *workload.Request) int {
	if len(r.Inputs) > 0 {
		return len(r.Inputs)
	}
	return 1
}

// appendStrings appends texts as a JSON list of strings.
func appendStrings(dst []byte, texts []string) []byte {
	dst = append(dst, '[')
	for i, t := range texts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = wire.AppendString(dst, t)
	}
	return append(dst, ']')
}

// countNumbers counts the values of key in b, each of which must be a
// number (what names it in the error).
func countNumbers(b, key []byte, what string) (int, error) {
	n := 0
	for rest := b; ; n++ {
		i := bytes.Index(rest, key)
		if i < 0 {
			return n, nil
		}
		v := skipSpace(rest[i+len(key):])
		if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
			return n, fmt.Errorf("%s %d is not a number", what, n)
		}
		rest = v
	}
}

var keyTotal = []byte(`"total_tokens":`)

// readPromptUsage reads usage.prompt_tokens of a pooled answer, when it
// has a usage object.
func readPromptUsage(b []byte, rec *record.Record) {
	if u := bytes.LastIndex(b, keyUsage); u >= 0 {
		if v := skipSpace(b[u+len(keyUsage):]); len(v) > 0 && v[0] == '{' {
			rec.UsageReported = true
			// Nothing is generated: a server that counts only the total
			// (Jina's rerank) counts the prompt.
			var ok bool
			if rec.PromptTokens, ok = intAfter(v, keyPrompt); !ok {
				rec.PromptTokens, _ = intAfter(v, keyTotal)
			}
		}
	}
}
