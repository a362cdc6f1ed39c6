package transport

import "testing"

// TestErrorWords: the server's own sentence and type are read from every
// error shape real servers write, and a body of none of them is shown as
// it came.
func TestErrorWords(t *testing.T) {
	for _, tc := range []struct {
		body, class, message string
	}{
		{`{"error":{"message":"max_tokens is too large","type":"invalid_request_error","param":"max_tokens","code":null}}`,
			"http_400:invalid_request_error", "max_tokens is too large"},
		{`{"object": "error", "message": "The model m is not a multimodal model", "type": "BadRequestError", "param": null, "code": 400}`,
			"http_400:BadRequestError", "The model m is not a multimodal model"},
		{`{"error":"Input validation error: inputs tokens + max_new_tokens must be <= 4096","error_type":"validation"}`,
			"http_400:validation", "Input validation error: inputs tokens + max_new_tokens must be <= 4096"},
		{`{"detail":"Not Found"}`, "http_400", "Not Found"},
		{`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`,
			"http_400:invalid_request_error", "max_tokens: Field required"},
		{`{"error":{"code":400,"message":"image input is not supported","type":"invalid_request_error"}}`,
			"http_400:invalid_request_error", "image input is not supported"},
		{`not json at all`, "http_400", "not json at all"},
		{`{"detail":[{"loc":["body","model"],"msg":"field required"}]}`, "http_400", `{"detail":[{"loc":["body","model"],"msg":"field required"}]}`},
	} {
		class, msg := httpErrorClass(400, []byte(tc.body))
		if class != tc.class || msg != tc.message {
			t.Errorf("%s:\n got %q %q\nwant %q %q", tc.body, class, msg, tc.class, tc.message)
		}
	}
}
