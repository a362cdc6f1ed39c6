package results

import (
	"encoding/json"
	"net/url"
	"strings"
)

// sensitiveWords mark a header, query parameter or body key that likely
// carries a credential.
var sensitiveWords = []string{"auth", "key", "token", "secret", "cookie", "password", "passwd", "credential", "signature", "sig", "session"}

// Sensitive reports whether a header, query parameter or JSON key name
// likely carries a credential.
func Sensitive(name string) bool {
	n := strings.ToLower(name)
	for _, w := range sensitiveWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactURL hides the credentials a URL may carry: its userinfo and the
// values of credential-like query parameters. Anything that does not parse
// is returned with everything after the scheme's host hidden.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.Index(raw, "://"); i >= 0 {
			return raw[:i+3] + Redacted
		}
		return Redacted
	}
	if u.User != nil {
		u.User = url.User(Redacted)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if Sensitive(k) {
				q[k] = []string{Redacted}
			}
		}
		u.RawQuery = q.Encode()
	}
	// url.URL escapes the brackets of the placeholder; keep it readable.
	s := u.String()
	s = strings.ReplaceAll(s, url.QueryEscape(Redacted), Redacted)
	return strings.ReplaceAll(s, url.PathEscape(Redacted), Redacted)
}

// RedactJSON replaces the values of credential-like keys, at any depth, of
// a JSON object given as text. Text that is not JSON is returned whole, as
// the caller validated it.
func RedactJSON(raw string) string {
	var v any
	if raw == "" || json.Unmarshal([]byte(raw), &v) != nil {
		return raw
	}
	changed := false
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, val := range t {
				if Sensitive(k) {
					t[k] = Redacted
					changed = true
				} else {
					t[k] = walk(val)
				}
			}
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
		}
		return x
	}
	v = walk(v)
	if !changed {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Redacted
	}
	return string(b)
}
