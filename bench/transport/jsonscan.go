package transport

import "bytes"

// Readers of a JSON object's members by their keys, for the hot path
// where a full decode costs too much. They read values as JSON, never as
// byte patterns that take in the spacing: a Python server writes
// `"type": "x"`, a Go one `"type":"x"` (a key pattern ends at its colon,
// and the value is read after any space).

// memberString is the string value of the member key ("name": with its
// quotes and colon) of the object p at its top level, not of an object
// nested in it, or nil (escapes kept).
func memberString(p, key []byte) []byte {
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '"':
			if depth == 1 && bytes.HasPrefix(p[i:], key) {
				return stringValue(p[i+len(key):])
			}
			for i++; i < len(p) && p[i] != '"'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
	return nil
}

// valueAfter is what follows the first key in p, its leading space
// skipped, or nil.
func valueAfter(p, key []byte) []byte {
	i := bytes.Index(p, key)
	if i < 0 {
		return nil
	}
	return skipSpace(p[i+len(key):])
}

// objectAfter is the object that follows the first key in p, braces
// included, or nil when none does.
func objectAfter(p, key []byte) []byte {
	v := valueAfter(p, key)
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	depth := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			for i++; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return v[:i+1]
			}
		}
	}
	return nil
}

// typeFrom is the string value of the last "type" member in p whose
// value starts with prefix, searching from the end: a Responses event's
// own type (vLLM writes it last, OpenAI first; no object nested in an
// event has a type that starts with "response.").
func typeFrom(p, prefix []byte) []byte {
	for end := len(p); end > 0; {
		i := bytes.LastIndex(p[:end], keyType)
		if i < 0 {
			return nil
		}
		if v := stringValue(p[i+len(keyType):]); bytes.HasPrefix(v, prefix) {
			return v
		}
		end = i
	}
	return nil
}

var keyType = []byte(`"type":`)
