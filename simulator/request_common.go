package simulator

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// commonRequest is apiRequest with the messages decoded in the same pass.
// The outer Messages field hides the embedded raw one.
type commonRequest struct {
	apiRequest
	Messages []commonMessage `json:"messages"`
}

type commonMessage struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
}

// decodeCommon decodes the usual request (string contents, valid fields)
// in one JSON pass, where decodeRequestStrict takes three and builds an error
// parameter name per message: a quarter of the simulator's CPU at 10,000
// short requests per second. It returns nil for anything else, valid or
// not, and decodeRequestStrict then decides; FuzzDecodeRequest checks that the two
// agree whenever this one answers.
func decodeCommon(body []byte, chat bool) *decoded {
	if !chat {
		return nil
	}
	var r commonRequest
	if json.Unmarshal(body, &r) != nil {
		return nil
	}
	if r.Model == nil || *r.Model == "" || len(r.Messages) == 0 {
		return nil
	}
	msgs := make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		if m.Role == nil {
			return nil
		}
		switch *m.Role {
		case "system", "user", "assistant", "developer", "tool":
		default:
			return nil
		}
		text, ok := plainJSONString(m.Content)
		if !ok {
			return nil
		}
		msgs[i] = Message{Role: *m.Role, Text: text}
	}
	mt := r.MaxTokens
	if r.MaxCompletionTokens != nil {
		mt = r.MaxCompletionTokens
	}
	if (mt != nil && *mt < 1) || (r.N != nil && *r.N != 1) || !isNull(r.Stop) {
		return nil
	}
	d := &decoded{Model: *r.Model, Stream: r.Stream != nil && *r.Stream}
	d.Gen = GenRequest{Chat: true, Model: d.Model, Messages: msgs, MaxTokens: mt, Seed: r.Seed,
		IgnoreEOS: r.IgnoreEOS != nil && *r.IgnoreEOS}
	if r.StreamOptions != nil && r.StreamOptions.IncludeUsage != nil {
		d.IncludeUsage = *r.StreamOptions.IncludeUsage
	}
	return d
}

// plainJSONString returns the value of a JSON string literal that needs no
// unescaping: no backslash, no control byte, valid UTF-8 (which
// encoding/json would have replaced). Anything else reports false.
func plainJSONString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return "", false
	}
	for _, c := range s {
		if c < 0x20 {
			return "", false
		}
	}
	return string(s), true
}
