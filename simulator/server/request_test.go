package server

import (
	"reflect"
	"testing"

	"github.com/kneebench/knee/workload/kind"
)

// FuzzDecodeRequest: no body may panic the decoder, and every refusal is an
// APIError with a 400 status.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}]}`,
		`{"model":"m","prompt":["x"],"stop":["a","b"],"seed":-3,"n":1,"ignore_eos":true}`,
		`{"model":1}`, `[]`, `null`, `{"model":"m","messages":null}`, `{"max_tokens":1e99}`,
		// Shapes where a shortcut decoder could part ways with encoding/json.
		`{"model":"m","messages":[{"role":"user","content":"a\nb\u00e9\ud800"}],"MODEL":"x"}`,
		`{"model":"m","model":"n","messages":[{"role":"user","content":"hi","ROLE":"system"}]}`,
		`{"model":"m","ſtream":true,"messages":[{"role":"user","content":"hi"}],"max_tokens":4.0}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":-1,"n":1,"stream_options":{"include_usage":null},"stream":null}`,
		// Sampling parameters: in range, out of range, of the wrong type,
		// in another case, twice.
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.7,"top_p":1,"top_logprobs":20,"logprobs":true}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":2.0001,"presence_penalty":-2}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":"hot","frequency_penalty":1e400}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"Temperature":9,"temperature":1}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"logprobs":3,"top_logprobs":-1}`,
		`{"model":"m","prompt":"","logprobs":5}`,
		"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}",
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	r, err := loadBuiltinResponses("responses")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, chat bool) {
		if fast := decodeCommon(body, chat); fast != nil {
			strict, err := decodeRequestStrict(body, chat)
			if err != nil || !reflect.DeepEqual(fast, strict) {
				t.Fatalf("the common-case decoder accepted what the strict one did not return alike:\n%+v\n%+v, %v", fast, strict, err)
			}
		}
		d, err := decodeRequest(body, chat)
		if err != nil {
			e, ok := err.(*APIError)
			if !ok || e.Status != 400 || e.Message == "" {
				t.Fatalf("error %T %v is not a 400 APIError", err, err)
			}
			return
		}
		// A decoded request must also survive generation.
		plan, err := r.Generate(&d.Gen, 2048)
		if err == nil && d.Gen.MaxTokens != nil && len(plan.Tokens) > *d.Gen.MaxTokens {
			t.Fatalf("%d tokens for max_tokens %d", len(plan.Tokens), *d.Gen.MaxTokens)
		}
	})
}

// TestDecodeCommonCase checks which requests take the one-pass decoder and
// that the answer never depends on the path taken.
func TestDecodeCommonCase(t *testing.T) {
	tests := []struct {
		body   string
		common bool
	}{
		{`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}`, true},
		{`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"héllo"}],"seed":3,"ignore_eos":true}`, true},
		{`{"model":"m","messages":[{"role":"user","content":"line\nbreak \u00e9\ud83d\ude00"}]}`, true},
		{`{"model":"m","messages":[{"role":"user","content":"lone \ud800 surrogate"}]}`, false},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`, false}, // content parts
		{`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":"x"}`, false},
		{`{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, false},
		{`{"model":"m","messages":[{"role":"user","content":"hi"}]} trailing`, false},
	}
	for _, tt := range tests {
		common := decodeCommon([]byte(tt.body), true)
		if (common != nil) != tt.common {
			t.Errorf("%s: common decoder answered %v, want %v", tt.body, common != nil, tt.common)
		}
		strict, serr := decodeRequestStrict([]byte(tt.body), true)
		got, err := decodeRequest([]byte(tt.body), true)
		if !reflect.DeepEqual(got, strict) || (err == nil) != (serr == nil) {
			t.Errorf("%s: decodeRequest %+v, %v; strict %+v, %v", tt.body, got, err, strict, serr)
		}
	}
}

// FuzzDecodeEveryKind: no body may panic a kind's decoder, whichever
// kind, and every refusal is an APIError with a 4xx status; a decoded
// request survives generation within its budget.
func FuzzDecodeEveryKind(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":8,"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}],"stream":true}`,
		`{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"42"}]}],"max_tokens":-1}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}],"max_output_tokens":4,"previous_response_id":"resp_x","stream":true}`,
		`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":{}}],"reasoning":{"effort":"high"}}`,
		`{"text":"hi","sampling_params":{"max_new_tokens":3,"ignore_eos":true},"stream":true}`,
		`{"model":"m","input":["a","b"],"encoding_format":"float"}`, `{"model":"m","query":"q","documents":["a",""],"top_n":-1}`,
		`{"model":"m","text_1":"q","text_2":["a","b"]}`, `{"model":"m","text_1":["q","r"],"text_2":"a"}`, `[]`, `null`, `{"max_tokens":1e99}`,
	} {
		for k := range kind.Names() {
			f.Add([]byte(s), uint8(k))
		}
	}
	r, err := loadBuiltinResponses("responses")
	if err != nil {
		f.Fatal(err)
	}
	mf, err := ParseModels("m", []byte("models:\n  - name: m\n    preset: h100-80gb/llama-3.1-8b\n"))
	if err != nil {
		f.Fatal(err)
	}
	s, err := NewServer(Options{Models: mf, Responder: r})
	if err != nil {
		f.Fatal(err)
	}
	names := kind.Names()
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		h := handlers[names[int(which)%len(names)]]
		d, err := h.decode(s, body)
		if err != nil {
			e, ok := err.(*APIError)
			if !ok || e.Status < 400 || e.Status > 499 || e.Message == "" {
				t.Fatalf("%s: error %T %v is not a 4xx APIError", h.kind.Name, err, err)
			}
			return
		}
		plan, err := r.Generate(&d.Gen, 2048)
		if err == nil && d.Gen.MaxTokens != nil && len(plan.Tokens) > *d.Gen.MaxTokens {
			t.Fatalf("%s: %d tokens for max_tokens %d", h.kind.Name, len(plan.Tokens), *d.Gen.MaxTokens)
		}
	})
}
