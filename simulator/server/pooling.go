package server

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"

	"github.com/kneebench/knee/workload/wire"
)

// embeddingsRequest is the body of POST /v1/embeddings.
type embeddingsRequest struct {
	named
	Input          json.RawMessage `json:"input"`
	EncodingFormat *string         `json:"encoding_format"`
}

// named is a pooling request's model, which each of them requires.
type named struct {
	Model *string `json:"model"`
}

func (n *named) model() *string { return n.Model }

// decodeNamed decodes a request object and requires its model.
func decodeNamed[T any, P interface {
	*T
	model() *string
}](body []byte) (P, error) {
	r := P(new(T))
	if err := decodeObject(body, r); err != nil {
		return nil, err
	}
	if m := r.model(); m == nil || *m == "" {
		return nil, badRequest("model", "you must provide a model parameter")
	}
	return r, nil
}

// maxInputs bounds one embeddings request's inputs.
const maxInputs = 4096

// decodeEmbeddings parses an embeddings request: input a text, a list
// of texts, or token ids (a list, or a list of lists). Every error names
// its field.
func decodeEmbeddings(body []byte) (*decoded, error) {
	r, err := decodeNamed[embeddingsRequest](body)
	if err != nil {
		return nil, err
	}
	if f := r.EncodingFormat; f != nil && *f != "float" {
		return nil, badRequest("encoding_format", "encoding_format %q is not served here: use float", *f)
	}
	d := &decoded{Model: *r.Model}
	inputs, err := inputsOf(r.Input)
	if err != nil {
		return nil, err
	}
	d.inputs = inputs
	return d, nil
}

// inputsOf reads input into texts; token ids become a text of as many
// tokens.
func inputsOf(raw json.RawMessage) ([]string, error) {
	if isNull(raw) {
		return nil, badRequest("input", "'input' is a required property")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, badRequest("input", "'input' must not be empty")
		}
		return []string{s}, nil
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil {
		return checkInputs(texts)
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil {
		return checkInputs([]string{idText(len(ids))})
	}
	var lists [][]int
	if json.Unmarshal(raw, &lists) == nil {
		out := make([]string, len(lists))
		for i, l := range lists {
			out[i] = idText(len(l))
		}
		return checkInputs(out)
	}
	return nil, badRequest("input", "invalid 'input': expected a string, a list of strings, or token ids")
}

func checkInputs(texts []string) ([]string, error) {
	if len(texts) == 0 || len(texts) > maxInputs {
		return nil, badRequest("input", "'input' must hold 1 to %d items, got %d", maxInputs, len(texts))
	}
	for i, t := range texts {
		if t == "" {
			return nil, badRequest(fmt.Sprintf("input[%d]", i), "input[%d] is empty", i)
		}
	}
	return texts, nil
}

// idText is a text of n tokens, standing for n token ids.
func idText(n int) string {
	if n == 0 {
		return ""
	}
	b := make([]byte, 0, 2*n)
	b = append(b, 't')
	for range n - 1 {
		b = append(b, " t"...)
	}
	return string(b)
}

// embeddingsBody is the answer: one vector per input, unit length, the
// same for the same text.
func (r *run) embeddingsBody(info StreamInfo) []byte {
	dim := r.m.spec.Pooling.Dimension
	b := append(make([]byte, 0, 64+len(r.inputs)*dim*11), `{"id":"embd-knee-`...)
	b = strconv.AppendInt(b, r.id, 10)
	b = append(b, `","object":"list","created":`...)
	b = strconv.AppendInt(b, r.s.created, 10)
	b = append(b, `,"model":`...)
	b = wire.AppendString(b, r.model)
	b = append(b, `,"data":[`...)
	vec := make([]float64, dim)
	for i, in := range r.inputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"object":"embedding","embedding":[`...)
		vectorOf(in, vec)
		for j, v := range vec {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, v, 'f', 6, 64)
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(r.plan.PromptTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(r.plan.PromptTokens), 10)
	_ = info
	return append(b, "}}"...)
}

// vectorOf fills vec with text's unit vector: numbers drawn from the
// text's hash.
func vectorOf(text string, vec []float64) {
	h := fnv.New64a()
	h.Write([]byte(text))
	x := h.Sum64() | 1
	norm := 0.0
	for i := range vec {
		// xorshift64*: cheap, and the same for the same text.
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		v := float64(int64(x*2685821657736338717)>>11) / float64(1<<52)
		vec[i] = v
		norm += v * v
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		norm = 1
	}
	for i := range vec {
		vec[i] /= norm
	}
}

// rerankRequest is the body of POST /v1/rerank (also /rerank and
// /v2/rerank, as vLLM routes them).
type rerankRequest struct {
	named
	Query     *string         `json:"query"`
	Documents json.RawMessage `json:"documents"`
	TopN      *int            `json:"top_n"`
}

// decodeRerank parses a rerank request: a query and documents (texts,
// or {"text"} objects), top_n at most their number. Each pair of query
// and document is one input.
func decodeRerank(body []byte) (*decoded, error) {
	r, err := decodeNamed[rerankRequest](body)
	if err != nil {
		return nil, err
	}
	if r.Query == nil || *r.Query == "" {
		return nil, badRequest("query", "'query' must be a non-empty string")
	}
	var docs []string
	if json.Unmarshal(r.Documents, &docs) != nil {
		var objs []struct {
			Text *string `json:"text"`
		}
		if json.Unmarshal(r.Documents, &objs) != nil {
			return nil, badRequest("documents", "'documents' must be a list of texts or of {\"text\"} objects")
		}
		for i, o := range objs {
			if o.Text == nil {
				return nil, badRequest(fmt.Sprintf("documents[%d].text", i), "documents[%d] has no text", i)
			}
			docs = append(docs, *o.Text)
		}
	}
	if _, err := checkInputs(docs); err != nil {
		return nil, badRequest("documents", "'documents' must hold 1 to %d non-empty texts", maxInputs)
	}
	d := &decoded{Model: *r.Model, query: *r.Query, topN: len(docs)}
	if r.TopN != nil {
		if *r.TopN < 1 {
			return nil, badRequest("top_n", "top_n must be at least 1, got %d", *r.TopN)
		}
		d.topN = min(*r.TopN, len(docs))
	}
	d.inputs = make([]string, len(docs))
	for i, doc := range docs {
		d.inputs[i] = *r.Query + "\n" + doc
	}
	d.docs = docs
	return d, nil
}

// rerankBody is the answer: the top_n documents by a relevance score in
// (0, 1) that the same query and document always get, best first.
func (r *run) rerankBody() []byte {
	type scored struct {
		i     int
		score float64
	}
	all := make([]scored, len(r.inputs))
	for i, in := range r.inputs {
		h := fnv.New64a()
		h.Write([]byte(in))
		all[i] = scored{i, float64(h.Sum64()>>11) / float64(1<<53)}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	b := append([]byte(nil), `{"id":"rerank-knee-`...)
	b = strconv.AppendInt(b, r.id, 10)
	b = append(b, `","model":`...)
	b = wire.AppendString(b, r.model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(r.plan.PromptTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(r.plan.PromptTokens), 10)
	b = append(b, `},"results":[`...)
	for k, s := range all[:r.topN] {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(s.i), 10)
		b = append(b, `,"document":{"text":`...)
		b = wire.AppendString(b, r.docs[s.i])
		b = append(b, `},"relevance_score":`...)
		b = strconv.AppendFloat(b, s.score, 'f', 6, 64)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// scoreRequest is the body of POST /v1/score (and /score): text_1
// scored against each of text_2.
type scoreRequest struct {
	named
	Text1 json.RawMessage `json:"text_1"`
	Text2 json.RawMessage `json:"text_2"`
}

// decodeScore parses a score request: text_1 one text (or a list of one,
// or of as many as text_2, pair by pair), text_2 a text or a list.
func decodeScore(body []byte) (*decoded, error) {
	r, err := decodeNamed[scoreRequest](body)
	if err != nil {
		return nil, err
	}
	texts := func(raw json.RawMessage, param string) ([]string, error) {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return []string{s}, nil
		}
		var l []string
		if json.Unmarshal(raw, &l) != nil {
			return nil, badRequest(param, "'%s' must be a text or a list of texts", param)
		}
		if _, err := checkInputs(l); err != nil {
			return nil, badRequest(param, "'%s' must hold 1 to %d non-empty texts", param, maxInputs)
		}
		return l, nil
	}
	t1, err := texts(r.Text1, "text_1")
	if err != nil {
		return nil, err
	}
	t2, err := texts(r.Text2, "text_2")
	if err != nil {
		return nil, err
	}
	if len(t1) != 1 && len(t1) != len(t2) {
		return nil, badRequest("text_1", "text_1 holds %d texts for text_2's %d: give one, or one a pair", len(t1), len(t2))
	}
	d := &decoded{Model: *r.Model, docs: t2, topN: len(t2)}
	for i, doc := range t2 {
		d.inputs = append(d.inputs, t1[min(i, len(t1)-1)]+"\n"+doc)
	}
	return d, nil
}

// scoreBody is the answer: a score for each pair, in order, the same
// for the same pair.
func (r *run) scoreBody() []byte {
	b := append([]byte(nil), `{"id":"score-knee-`...)
	b = strconv.AppendInt(b, r.id, 10)
	b = append(b, `","object":"list","created":`...)
	b = strconv.AppendInt(b, r.s.created, 10)
	b = append(b, `,"model":`...)
	b = wire.AppendString(b, r.model)
	b = append(b, `,"data":[`...)
	for i, in := range r.inputs {
		if i > 0 {
			b = append(b, ',')
		}
		h := fnv.New64a()
		h.Write([]byte(in))
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"object":"score","score":`...)
		b = strconv.AppendFloat(b, float64(h.Sum64()>>11)/float64(1<<53), 'f', 6, 64)
		b = append(b, '}')
	}
	b = append(b, `],"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(r.plan.PromptTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(r.plan.PromptTokens), 10)
	return append(b, "}}"...)
}

// The pooling kinds' answers, each one body.
type (
	embeddingsAnswer struct{}
	rerankAnswer     struct{}
	scoreAnswer      struct{}
)

func init() {
	register("embeddings", func(_ *Server, b []byte) (*decoded, error) { return decodeEmbeddings(b) }, embeddingsAnswer{})
	register("rerank", func(_ *Server, b []byte) (*decoded, error) { return decodeRerank(b) }, rerankAnswer{})
	register("score", func(_ *Server, b []byte) (*decoded, error) { return decodeScore(b) }, scoreAnswer{})
}

func (embeddingsAnswer) body(r *run, info StreamInfo) []byte { return r.embeddingsBody(info) }
func (rerankAnswer) body(r *run, _ StreamInfo) []byte        { return r.rerankBody() }
func (scoreAnswer) body(r *run, _ StreamInfo) []byte         { return r.scoreBody() }
