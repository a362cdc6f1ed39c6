package server

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

const poolingModels = `
models:
  - name: embedder
    context_length: 4096
    engine: instant
    pooling: {dimension: 8}
  - name: instant
    context_length: 4096
    engine: instant
`

// TestEmbeddingsAsVLLM: a pooling model answers /v1/embeddings with one
// unit vector of its dimension per input, the same for the same text,
// and the inputs' tokens in usage; it refuses to generate, and a
// generative model refuses embeddings, as vLLM's routes do; bad input
// is a 400 naming the field.
func TestEmbeddingsAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, testEmbeddingsAsVLLM)
}

func testEmbeddingsAsVLLM(t *testing.T) {
	ts := startSim(t, poolingModels, "", "")
	code, b := post(t, ts.URL+"/v1/embeddings", `{"model":"embedder","input":["the sea is calm","tell me about the sea tonight","the sea is calm"]}`)
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	var got struct {
		Object string
		Data   []struct {
			Index     int
			Embedding []float64
		}
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Object != "list" || len(got.Data) != 3 || got.Usage.PromptTokens < 10 {
		t.Fatalf("%s", b)
	}
	for i, d := range got.Data {
		norm := 0.0
		for _, v := range d.Embedding {
			norm += v * v
		}
		if d.Index != i || len(d.Embedding) != 8 || math.Abs(norm-1) > 1e-4 {
			t.Errorf("vector %d: index %d, %d numbers, norm² %g", i, d.Index, len(d.Embedding), norm)
		}
	}
	if !reflect.DeepEqual(got.Data[0].Embedding, got.Data[2].Embedding) || reflect.DeepEqual(got.Data[0].Embedding, got.Data[1].Embedding) {
		t.Errorf("the same text gave another vector, or two texts the same one")
	}
	for _, c := range []struct{ path, body, param string }{
		{"/v1/chat/completions", `{"model":"embedder","messages":[{"role":"user","content":"x"}]}`, "model"},
		{"/v1/embeddings", `{"model":"instant","input":"x"}`, "model"},
		{"/v1/embeddings", `{"model":"embedder","input":[]}`, "input"},
		{"/v1/embeddings", `{"model":"embedder","input":["a",""]}`, "input[1]"},
		{"/v1/embeddings", `{"model":"embedder","input":"x","encoding_format":"base64"}`, "encoding_format"},
		{"/v1/embeddings", `{"model":"embedder","input":{"a":1}}`, "input"},
	} {
		code, b := post(t, ts.URL+c.path, c.body)
		e := errorOf(t, b)
		if code != 400 || e.Error.Param == nil || *e.Error.Param != c.param {
			t.Errorf("%s %s: %d %s; want 400 naming %s", c.path, c.body, code, b, c.param)
		}
	}
	// Token ids count as tokens.
	code, b = post(t, ts.URL+"/v1/embeddings", `{"model":"embedder","input":[[1,2,3,4,5],[6,7]]}`)
	if err := json.Unmarshal(b, &got); code != 200 || err != nil || len(got.Data) != 2 || got.Usage.PromptTokens != 7 {
		t.Errorf("token ids: %d %s", code, b)
	}
}

// TestRerankAsVLLM: a pooling model ranks documents against a query at
// /v1/rerank (and /rerank, /v2/rerank): top_n results, best first, each
// with its index, its document and a score the same pair always gets;
// usage counts the pairs' tokens; bad input is a 400 naming the field.
func TestRerankAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, testRerankAsVLLM)
}

func testRerankAsVLLM(t *testing.T) {
	ts := startSim(t, poolingModels, "", "")
	body := `{"model":"embedder","query":"where is the sea","documents":["the sea is west","mountains rise east",{"text":"x"}],"top_n":2}`
	code, _ := post(t, ts.URL+"/v1/rerank", body)
	if code != 400 {
		t.Errorf("documents mixing texts and objects: %d, want 400", code)
	}
	body = `{"model":"embedder","query":"where is the sea","documents":["the sea is west","mountains rise east","rivers run south"],"top_n":2}`
	var first []byte
	for _, path := range []string{"/v1/rerank", "/rerank", "/v2/rerank"} {
		code, b := post(t, ts.URL+path, body)
		var got struct {
			Results []struct {
				Index    int
				Document struct{ Text string }
				Score    float64 `json:"relevance_score"`
			}
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			}
		}
		if err := json.Unmarshal(b, &got); code != 200 || err != nil {
			t.Fatalf("%s: %d %s", path, code, b)
		}
		if len(got.Results) != 2 || got.Results[0].Score < got.Results[1].Score || got.Usage.PromptTokens < 12 ||
			got.Results[0].Document.Text != []string{"the sea is west", "mountains rise east", "rivers run south"}[got.Results[0].Index] {
			t.Errorf("%s: %s", path, b)
		}
		if b = b[bytes.Index(b, []byte(`"results"`)):]; first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Errorf("%s ranked otherwise than /v1/rerank", path)
		}
	}
	for _, c := range []struct{ body, param string }{
		{`{"model":"embedder","documents":["a"]}`, "query"},
		{`{"model":"embedder","query":"q","documents":[]}`, "documents"},
		{`{"model":"embedder","query":"q","documents":["a"],"top_n":0}`, "top_n"},
		{`{"model":"instant","query":"q","documents":["a"]}`, "model"},
	} {
		code, b := post(t, ts.URL+"/v1/rerank", c.body)
		if e := errorOf(t, b); code != 400 || e.Error.Param == nil || *e.Error.Param != c.param {
			t.Errorf("%s: %d %s; want 400 naming %s", c.body, code, b, c.param)
		}
	}
}

// TestScoreAsVLLM: /v1/score (and /score) scores text_1 against each of
// text_2 in order, the same for the same pair; text_1 of as many texts
// pairs them one to one; mismatched lists are a 400 naming text_1.
func TestScoreAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, testScoreAsVLLM)
}

func testScoreAsVLLM(t *testing.T) {
	ts := startSim(t, poolingModels, "", "")
	var got struct {
		Data []struct {
			Index  int
			Object string
			Score  float64
		}
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	for _, path := range []string{"/v1/score", "/score"} {
		code, b := post(t, ts.URL+path, `{"model":"embedder","text_1":"where is the sea","text_2":["west","east","south"]}`)
		if err := json.Unmarshal(b, &got); code != 200 || err != nil || len(got.Data) != 3 || got.Data[2].Index != 2 || got.Data[0].Object != "score" || got.Usage.PromptTokens < 12 {
			t.Errorf("%s: %d %s", path, code, b)
		}
	}
	code, b := post(t, ts.URL+"/v1/score", `{"model":"embedder","text_1":["a","b"],"text_2":["x","y","z"]}`)
	if e := errorOf(t, b); code != 400 || e.Error.Param == nil || *e.Error.Param != "text_1" {
		t.Errorf("two queries for three texts: %d %s", code, b)
	}
}
