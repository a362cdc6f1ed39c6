package transport

import (
	"bytes"
	"fmt"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/wire"
)

func init() { register("score", scoreProtocol{}) }

// scoreProtocol is vLLM's /v1/score: text_1 (the query) scored against
// each of text_2 (the documents), a score for each back.
type scoreProtocol struct{}

func (scoreProtocol) appendBody(b *body, r *workload.Request, model string) {
	query, docs := wire.Pairs(r.Inputs, r.Text())
	if b.field("model") {
		b.dst = wire.AppendString(b.dst, model)
	}
	if b.field("text_1") {
		b.dst = wire.AppendString(b.dst, query)
	}
	if b.field("text_2") {
		b.dst = appendStrings(b.dst, docs)
	}
}

var keyScore = []byte(`"score":`)

// readAnswer checks a score answer: a number for each document.
func (scoreProtocol) readAnswer(b []byte, r *workload.Request, rec *record.Record) error {
	_, docs := wire.Pairs(r.Inputs, r.Text())
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
