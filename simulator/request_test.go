package simulator

import (
	"testing"
)

// FuzzDecodeRequest: no body may panic the decoder, and every refusal is an
// APIError with a 400 status.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}]}`,
		`{"model":"m","prompt":["x"],"stop":["a","b"],"seed":-3,"n":1,"ignore_eos":true}`,
		`{"model":1}`, `[]`, `null`, `{"model":"m","messages":null}`, `{"max_tokens":1e99}`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	r, err := LoadResponses("builtin:responses")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, chat bool) {
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
