package results

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://user:hunter2@gpu:8000/v1?api_key=abc&x=1", "http://[redacted]@gpu:8000/v1?api_key=[redacted]&x=1"},
		{"http://gpu:8000/v1?token=t0k", "http://gpu:8000/v1?token=[redacted]"},
		{"https://gpu/v1", "https://gpu/v1"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactJSON(t *testing.T) {
	got := RedactJSON(`{"ignore_eos":true,"api_key":"sk-1","extra":{"auth_token":"t","n":[{"password":"p"}]}}`)
	for _, secret := range []string{"sk-1", `"t"`, `"p"`} {
		if strings.Contains(got, secret) {
			t.Errorf("%s left in %s", secret, got)
		}
	}
	if !strings.Contains(got, `"ignore_eos":true`) {
		t.Errorf("harmless keys lost: %s", got)
	}
	if plain := `{"ignore_eos": true}`; RedactJSON(plain) != plain {
		t.Error("a body without secrets was rewritten")
	}
}

// TestSensitiveNames: credential names in their usual spellings, and the
// model's own token fields, which are no credential.
func TestSensitiveNames(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "Proxy-Authorization": true, "X-Api-Key": true, "api_key": true, "apiKey": true, "APIKey": true,
		"access_token": true, "accessToken": true, "id_token": true, "token": true, "Cookie": true, "client_secret": true,
		"X-Amz-Signature": true, "sig": true, "password": true, "x-session-id": true,
		"max_tokens": false, "max_completion_tokens": false, "stop_token_ids": false, "skip_special_tokens": false, "ignore_eos": false,
		"model": false, "tokenizer": false, "prompt_tokens": false, "sigma": false, "keyword": false, "monkey": false, "x": false,
	} {
		if Sensitive(name) != want {
			t.Errorf("Sensitive(%q) = %v, want %v", name, !want, want)
		}
	}
}
