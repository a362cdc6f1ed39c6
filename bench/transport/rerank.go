package transport

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

func init() { register("rerank", rerankProtocol{}) }

// rerankProtocol is vLLM's (and Jina's and Cohere's) /v1/rerank: a query
// and documents (the request's first input, then the rest), a relevance
// score for each back.
type rerankProtocol struct{}

func (rerankProtocol) appendBody(b *body, r *workload.Request, model string) {
	query, docs := wire.Pairs(r.Inputs, r.Text())
	if b.field("model") {
		b.dst = wire.AppendString(b.dst, model)
	}
	if b.field("query") {
		b.dst = wire.AppendString(b.dst, query)
	}
	if b.field("documents") {
		b.dst = appendStrings(b.dst, docs)
	}
	if b.field("top_n") {
		b.dst = strconv.AppendInt(b.dst, int64(len(docs)), 10)
	}
}

var (
	keyResults   = []byte(`"results":`)
	keyRelevance = []byte(`"relevance_score":`)
	keyTotal     = []byte(`"total_tokens":`)
)

// readAnswer checks a rerank answer: a score for each document (top_n is
// all of them), each a number, and the tokens from usage.
func (rerankProtocol) readAnswer(b []byte, r *workload.Request, rec *record.Record) error {
	_, docs := wire.Pairs(r.Inputs, r.Text())
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
