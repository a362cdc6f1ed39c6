package results

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode"
)

// credentialWords are the words of a header, query parameter or body
// key name that mark its value as a credential.
var credentialWords = map[string]bool{"auth": true, "authorization": true, "authentication": true, "key": true, "apikey": true,
	"secret": true, "cookie": true, "password": true, "passwd": true, "pwd": true, "credential": true, "credentials": true,
	"signature": true, "sig": true, "session": true, "sessionid": true, "bearer": true, "jwt": true, "token": true, "accesstoken": true}

// notCredentials are words that, after "token", make it a count or an id
// of the model's tokens rather than a credential (max_tokens, stop_token_ids).
var notCredentials = map[string]bool{"id": true, "ids": true, "count": true, "counts": true, "limit": true, "budget": true, "type": true}

// Sensitive reports whether a header, query parameter or JSON key name
// likely carries a credential: one of its words (split at punctuation and
// case changes: X-Api-Key, access_token, clientSecret) is a credential's,
// and "token" is no count or id of the model's (max_tokens, stop_token_ids).
func Sensitive(name string) bool {
	words := nameWords(name)
	for i, w := range words {
		if w == "token" && i+1 < len(words) && notCredentials[words[i+1]] {
			continue
		}
		if credentialWords[w] {
			return true
		}
	}
	return false
}

// nameWords splits a name into its lower-cased words: at every character
// that is no letter or digit, and where case changes (clientSecret,
// APIKey).
func nameWords(name string) []string {
	var words []string
	var cur []rune
	runes := []rune(name)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range runes {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(cur[len(cur)-1]) ||
			i+1 < len(runes) && unicode.IsLower(runes[i+1]) && unicode.IsUpper(cur[len(cur)-1])):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return words
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
