package transport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/workload/kind"

	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// vllmEmbeddings is an embeddings answer as vLLM's serving_embedding
// writes it: id, object list, created, model, data (index, object,
// embedding), usage.
func vllmEmbeddings(dims ...int) string {
	var data []string
	for i, d := range dims {
		v := make([]string, d)
		for j := range v {
			v[j] = fmt.Sprintf("%.6f", 0.01*float64(j+i))
		}
		data = append(data, fmt.Sprintf(`{"index":%d,"object":"embedding","embedding":[%s]}`, i, strings.Join(v, ",")))
	}
	return fmt.Sprintf(`{"id":"embd-1","object":"list","created":1,"model":"e5","data":[%s],"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":0,"prompt_tokens_details":null}}`,
		strings.Join(data, ","), 7*len(dims), 7*len(dims))
}

// TestEmbeddingsReadRight: knee sends a batch as input with
// encoding_format float, and reads an answer as one chunk at its end,
// its prompt tokens from usage and no output; one vector missing, or of
// another dimension, is a malformed answer.
func TestEmbeddingsReadRight(t *testing.T) {
	quiet.Wire(t, func() { testEmbeddingsReadRight(t) })
}

func testEmbeddingsReadRight(t *testing.T) {
	bodies := make(chan map[string]any, 8)
	answer := make(chan string, 8)
	url := fakeserver.StartRaw(t, &fakeserver.Raw{Serve: func(w *bufio.Writer, r *http.Request, _ int) bool {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		m["_path"] = r.URL.Path
		bodies <- m
		w.WriteString(plainJSON(<-answer))
		return false
	}})
	c, err := NewClient(Target{BaseURL: url, Model: "e5", Endpoint: kind.Name("embeddings"), Timeout: 5 * time.Second}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	req := &workload.Request{Inputs: []string{"one", "two", "three"}}
	for _, cs := range []struct {
		answer string
		class  string
		dims   int
	}{
		{vllmEmbeddings(16, 16, 16), "", 16},
		{vllmEmbeddings(16, 16), record.ClassMalformed, 0},
		{vllmEmbeddings(16, 8, 16), record.ClassMalformed, 0},
		{`{"object":"list","data":[{"embedding":"AAAA"}]}`, record.ClassMalformed, 0},
		{`{"error":"nope"}`, record.ClassMalformed, 0},
	} {
		answer <- cs.answer
		rec := &record.Record{}
		c.Do(req, rec, false)
		sent := <-bodies
		if sent["_path"] != "/v1/embeddings" || fmt.Sprint(sent["input"]) != "[one two three]" || sent["encoding_format"] != "float" {
			t.Fatalf("sent %v", sent)
		}
		if rec.Class != cs.class {
			t.Errorf("%.60s: class %q (%s), want %q", cs.answer, rec.Class, rec.Message, cs.class)
			continue
		}
		if cs.class == "" && (rec.Chunks != 1 || rec.FirstToken != rec.LastToken || rec.PromptTokens != 21 || rec.OutputTokens() != 0 ||
			rec.Inputs != 3 || rec.Dimensions != cs.dims || !rec.Pooled) {
			t.Errorf("%d chunks, prompt %d, output %d, inputs %d, dims %d", rec.Chunks, rec.PromptTokens, rec.OutputTokens(), rec.Inputs, rec.Dimensions)
		}
	}
}

// TestRerankReadRight: a rerank request is the first input's first words
// as the query and the rest as documents, top_n all of them; vLLM's
// answer (results of index, document and relevance_score; usage
// total_tokens) is read to one score a document, and a score missing is
// a malformed answer.
func TestRerankReadRight(t *testing.T) {
	quiet.Wire(t, func() { testRerankReadRight(t) })
}

func testRerankReadRight(t *testing.T) {
	bodies := make(chan map[string]any, 4)
	answer := make(chan string, 4)
	url := fakeserver.StartRaw(t, &fakeserver.Raw{Serve: func(w *bufio.Writer, r *http.Request, _ int) bool {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		m["_path"] = r.URL.Path
		bodies <- m
		w.WriteString(plainJSON(<-answer))
		return false
	}})
	c, err := NewClient(Target{BaseURL: url, Model: "rr", Endpoint: kind.Name("rerank"), Timeout: 5 * time.Second}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	query := strings.Repeat("word ", 40)
	req := &workload.Request{Inputs: []string{query, "doc one", "doc two"}}
	vllm := `{"id":"rerank-1","model":"rr","usage":{"total_tokens":30},"results":[{"index":1,"document":{"text":"doc two"},"relevance_score":0.91},{"index":0,"document":{"text":"doc one"},"relevance_score":0.02}]}`
	for _, cs := range []struct{ answer, class string }{
		{vllm, ""},
		{strings.Replace(vllm, `,"relevance_score":0.02`, "", 1), record.ClassMalformed},
		{`{"results":[{"index":0,"relevance_score":null},{"index":1,"relevance_score":0.5}]}`, record.ClassMalformed},
	} {
		answer <- cs.answer
		rec := &record.Record{}
		c.Do(req, rec, false)
		sent := <-bodies
		if sent["_path"] != "/v1/rerank" || len(strings.Fields(sent["query"].(string))) != 32 || fmt.Sprint(sent["documents"]) != "[doc one doc two]" || sent["top_n"] != 2.0 {
			t.Fatalf("sent %v", sent)
		}
		if rec.Class != cs.class || cs.class == "" && (rec.Inputs != 2 || rec.PromptTokens != 30 || rec.OutputTokens() != 0) {
			t.Errorf("%.50s: class %q (%s), inputs %d, prompt %d", cs.answer, rec.Class, rec.Message, rec.Inputs, rec.PromptTokens)
		}
	}
}

// FuzzPooledAnswers: any answer body reads without a panic, and one
// judged well formed has as many vectors (scores) as inputs (documents).
func FuzzPooledAnswers(f *testing.F) {
	f.Add([]byte(vllmEmbeddings(4, 4)), 2)
	f.Add([]byte(`{"data":[{"embedding":[1,2]},{"embedding":[3`), 2)
	f.Add([]byte(`{"results":[{"relevance_score":0.5},{"relevance_score":-1e3}],"usage":{"total_tokens":9}}`), 3)
	f.Add([]byte(`{"data":[],"results":[]}`), 1)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		n = 1 + (n%8+8)%8
		req := &workload.Request{Inputs: make([]string, n)}
		for i := range req.Inputs {
			req.Inputs[i] = fmt.Sprintf("text %d", i)
		}
		rec := &record.Record{}
		if (embeddingsProtocol{}).readAnswer(body, req, rec) == nil && rec.Dimensions < 1 {
			t.Fatalf("a well-formed answer of no dimension: %q", body)
		}
		for _, p := range []pooledProtocol{protocols["rerank"].(pooledProtocol), protocols["score"].(pooledProtocol)} {
			rec = &record.Record{}
			if p.readAnswer(body, req, rec) == nil && rec.Inputs != n-1 && !(n == 1 && rec.Inputs == 1) {
				t.Fatalf("%T: %d documents counted for %d inputs: %q", p, rec.Inputs, n, body)
			}
		}
	})
}

// TestScoreReadRight: a score request sends the query as text_1 and the
// documents as text_2; vLLM's answer (data of index, object "score" and
// score) is one score a document, a missing one a malformed answer.
func TestScoreReadRight(t *testing.T) {
	vllm := `{"id":"score-1","object":"list","created":1,"model":"m","data":[{"index":0,"object":"score","score":0.7},{"index":1,"object":"score","score":0.1}],"usage":{"prompt_tokens":12,"total_tokens":12}}`
	req := &workload.Request{Inputs: []string{"a query", "doc one", "doc two"}}
	rec := &record.Record{}
	if err := protocols["score"].(pooledProtocol).readAnswer([]byte(vllm), req, rec); err != nil || rec.Inputs != 2 || rec.PromptTokens != 12 {
		t.Errorf("%v, %d inputs, %d prompt tokens", err, rec.Inputs, rec.PromptTokens)
	}
	if err := protocols["score"].(pooledProtocol).readAnswer([]byte(strings.Replace(vllm, `,"score":0.1`, "", 1)), req, &record.Record{}); err == nil {
		t.Error("a score missing was read as well formed")
	}
	c, _ := NewClient(Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Endpoint: kind.Name("score")}, 1)
	body := string(c.appendBody(nil, req))
	if !strings.Contains(body, `"text_1":"a query","text_2":["doc one","doc two"]`) || c.uri != "http://127.0.0.1:1/v1/score" {
		t.Errorf("sent %s to %s", body, c.uri)
	}
}
