package transport

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// pooledProtocol is an API whose answer is one JSON body, not a stream:
// a pooling model's (embeddings). Its latency is the whole answer's.
type pooledProtocol interface {
	protocol
	// readAnswer checks a 200 answer's body against the request r and
	// fills rec's counts; an answer of the wrong shape is an error.
	readAnswer(body []byte, r *workload.Request, rec *record.Record) error
}

// maxPooledBytes bounds a pooled answer: 256 inputs of 8,192 floats in
// JSON are some 40 MB.
const maxPooledBytes = 256 << 20

// readPooled reads a pooled answer whole: the request's one chunk is the
// end of its body, so TTFT and E2E are the same instant and ITL has no
// gaps.
func (c *Client) readPooled(p pooledProtocol, body io.Reader, r *workload.Request, rec *record.Record, fail func(string, error)) {
	b, err := io.ReadAll(io.LimitReader(body, maxPooledBytes+1))
	if err != nil {
		fail(c.classifyAt(err, false, rec.Sent), err)
		return
	}
	t := c.Now()
	if len(b) > maxPooledBytes {
		fail(record.ClassMalformed, fmt.Errorf("the answer is longer than %d MiB", maxPooledBytes>>20))
		return
	}
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

// embeddingsProtocol is OpenAI's /v1/embeddings, as vLLM serves it for a
// pooling model: input as one text or a batch, a list of vectors back.
type embeddingsProtocol struct{}

func (embeddingsProtocol) uri(base string) string { return joinURL(base, "/embeddings") }

func (embeddingsProtocol) appendBody(b *body, r *workload.Request, model string) {
	if b.field("model") {
		b.dst = appendJSONString(b.dst, model)
	}
	if b.field("input") {
		if len(r.Inputs) == 0 {
			b.dst = appendJSONString(b.dst, r.Text())
		} else {
			b.dst = appendStrings(b.dst, r.Inputs)
		}
	}
	if b.field("encoding_format") {
		b.dst = append(b.dst, `"float"`...)
	}
}

// A pooled answer streams nothing: these serve only the interface.
func (embeddingsProtocol) scan(_ []byte, c *chunk, _ *progress) { *c = chunk{} }
func (embeddingsProtocol) text(dst, _ []byte) []byte            { return dst }

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

// rerankProtocol is vLLM's (and Jina's and Cohere's) /v1/rerank: a query
// and documents (the request's first input, then the rest), a relevance
// score for each back.
type rerankProtocol struct{}

func (rerankProtocol) uri(base string) string { return joinURL(base, "/rerank") }

func (rerankProtocol) appendBody(b *body, r *workload.Request, model string) {
	query, docs := RerankParts(r)
	if b.field("model") {
		b.dst = appendJSONString(b.dst, model)
	}
	if b.field("query") {
		b.dst = appendJSONString(b.dst, query)
	}
	if b.field("documents") {
		b.dst = appendStrings(b.dst, docs)
	}
	if b.field("top_n") {
		b.dst = strconv.AppendInt(b.dst, int64(len(docs)), 10)
	}
}

// RerankParts is a rerank request's query (its first input's first
// queryWords words: a question is shorter than the passages it ranks)
// and documents (the other inputs; the whole text when it has none).
func RerankParts(r *workload.Request) (string, []string) {
	if len(r.Inputs) < 2 {
		t := r.Text()
		return firstWords(t, queryWords), []string{t}
	}
	return firstWords(r.Inputs[0], queryWords), r.Inputs[1:]
}

// queryWords is a rerank query's length in words.
const queryWords = 32

func firstWords(s string, n int) string {
	words := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' && i > 0 && s[i-1] != ' ' {
			if words++; words == n {
				return s[:i]
			}
		}
	}
	return s
}

func (rerankProtocol) scan(_ []byte, c *chunk, _ *progress) { *c = chunk{} }
func (rerankProtocol) text(dst, _ []byte) []byte            { return dst }

var (
	keyResults   = []byte(`"results":`)
	keyRelevance = []byte(`"relevance_score":`)
	keyTotal     = []byte(`"total_tokens":`)
)

// readAnswer checks a rerank answer: a score for each document (top_n is
// all of them), each a number, and the tokens from usage.
func (rerankProtocol) readAnswer(b []byte, r *workload.Request, rec *record.Record) error {
	_, docs := RerankParts(r)
	rec.Inputs = len(docs)
	if !bytes.Contains(b, keyResults) {
		return fmt.Errorf("the answer has no results list: %.120q", b)
	}
	n, err := countNumbers(b, keyRelevance, "relevance_score")
	if err != nil {
		return err
	}
	if n != len(docs) {
		return fmt.Errorf("%d scores for %d documents", n, len(docs))
	}
	if u := bytes.LastIndex(b, keyUsage); u >= 0 {
		v := skipSpace(b[u+len(keyUsage):])
		if len(v) > 0 && v[0] == '{' {
			rec.UsageReported = true
			var ok bool
			if rec.PromptTokens, ok = intAfter(v, keyPrompt); !ok {
				rec.PromptTokens, _ = intAfter(v, keyTotal)
			}
		}
	}
	return nil
}

// scoreProtocol is vLLM's /v1/score: text_1 (the query) scored against
// each of text_2 (the documents), a score for each back.
type scoreProtocol struct{}

func (scoreProtocol) uri(base string) string { return joinURL(base, "/score") }

func (scoreProtocol) appendBody(b *body, r *workload.Request, model string) {
	query, docs := RerankParts(r)
	if b.field("model") {
		b.dst = appendJSONString(b.dst, model)
	}
	if b.field("text_1") {
		b.dst = appendJSONString(b.dst, query)
	}
	if b.field("text_2") {
		b.dst = appendStrings(b.dst, docs)
	}
}

func (scoreProtocol) scan(_ []byte, c *chunk, _ *progress) { *c = chunk{} }
func (scoreProtocol) text(dst, _ []byte) []byte            { return dst }

var keyScore = []byte(`"score":`)

// readAnswer checks a score answer: a number for each document.
func (scoreProtocol) readAnswer(b []byte, r *workload.Request, rec *record.Record) error {
	_, docs := RerankParts(r)
	rec.Inputs = len(docs)
	if !bytes.Contains(b, keyData) {
		return fmt.Errorf("the answer has no data list: %.120q", b)
	}
	n, err := countNumbers(b, keyScore, "score")
	if err != nil {
		return err
	}
	if n != len(docs) {
		return fmt.Errorf("%d scores for %d documents", n, len(docs))
	}
	readPromptUsage(b, rec)
	return nil
}

// appendStrings appends texts as a JSON list of strings.
func appendStrings(dst []byte, texts []string) []byte {
	dst = append(dst, '[')
	for i, t := range texts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, t)
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

// readPromptUsage reads usage.prompt_tokens of a pooled answer, when it
// has a usage object.
func readPromptUsage(b []byte, rec *record.Record) {
	if u := bytes.LastIndex(b, keyUsage); u >= 0 {
		if v := skipSpace(b[u+len(keyUsage):]); len(v) > 0 && v[0] == '{' {
			rec.UsageReported = true
			rec.PromptTokens, _ = intAfter(v, keyPrompt)
		}
	}
}
