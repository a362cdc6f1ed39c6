package transport

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

func init() {
	// vLLM's (and Jina's and Cohere's) /v1/rerank: a query and documents,
	// a relevance score for each back (top_n is all of them).
	register("rerank", pairsProtocol{query: "query", docs: "documents", topN: true,
		list: []byte(`"results":`), listName: "results", score: []byte(`"relevance_score":`), scoreName: "relevance_score"})
	// vLLM's /v1/score: text_1 (the query) scored against each of text_2
	// (the documents), a score for each back.
	register("score", pairsProtocol{query: "text_1", docs: "text_2",
		list: keyData, listName: "data", score: []byte(`"score":`), scoreName: "score"})
}

// pairsProtocol is a paired kind's wire: the request's first input is the
// query and the rest its documents, and the answer holds a number for
// each document in a list.
type pairsProtocol struct {
	query, docs string
	topN        bool
	list        []byte
	listName    string
	score       []byte
	scoreName   string
}

func (p pairsProtocol) appendBody(b *body, r *workload.Request, model string) {
	query, docs := wire.Pairs(r.Inputs, r.Text())
	if b.field("model") {
		b.dst = wire.AppendString(b.dst, model)
	}
	if b.field(p.query) {
		b.dst = wire.AppendString(b.dst, query)
	}
	if b.field(p.docs) {
		b.dst = appendStrings(b.dst, docs)
	}
	if p.topN && b.field("top_n") {
		b.dst = strconv.AppendInt(b.dst, int64(len(docs)), 10)
	}
}

// readAnswer checks the answer: its list, a number for each document,
// and the tokens from usage.
func (p pairsProtocol) readAnswer(b []byte, r *workload.Request, rec *record.Record) error {
	_, docs := wire.Pairs(r.Inputs, r.Text())
	rec.Inputs = len(docs)
	if !bytes.Contains(b, p.list) {
		return fmt.Errorf("the answer has no %s list: %.120q", p.listName, b)
	}
	n, err := countNumbers(b, p.score, p.scoreName)
	if err != nil {
		return err
	}
	if n != len(docs) {
		return fmt.Errorf("%d scores for %d documents", n, len(docs))
	}
	readPromptUsage(b, rec)
	return nil
}
