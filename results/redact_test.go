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
