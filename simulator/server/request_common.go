package server

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// commonParsers are reused across requests: a fastjson parser keeps its
// value tree between parses, so a warm one parses without allocating.
var commonParsers fastjson.ParserPool

// decodeCommon decodes the usual chat request (string contents, valid
// fields) without reflection: the strict decoder's three encoding/json
// passes were a fifth of the simulator's CPU at 10,000 short requests per
// second. It returns nil for anything else, valid or not (content parts, a
// key spelled in another case or given twice, a stop list, ...), and
// decodeRequestStrict then decides. FuzzDecodeRequest checks that the two
// agree whenever this one answers.
func decodeCommon(body []byte, chat bool) *decoded {
	// json.Valid is encoding/json's own scanner, so what passes here is
	// exactly what encoding/json accepts; fastjson then only extracts.
	// Invalid UTF-8 anywhere (even in a field both decoders ignore) is a
	// 400 from the strict decoder, so it is left to it.
	if !chat || !utf8.Valid(body) || !json.Valid(body) {
		return nil
	}
	p := commonParsers.Get()
	defer commonParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil
	}
	top, err := v.Object()
	if err != nil || !commonShape(top) {
		return nil
	}
	r := &fastReader{ok: true}
	d := &decoded{}
	if m := top.Get("model"); m != nil {
		d.Model = r.str(m)
	}
	if !r.ok || d.Model == "" || !r.messages(d, top.Get("messages")) || !commonLimits(d, top) {
		return nil
	}
	d.Stream = r.boolean(top.Get("stream"))
	d.Gen.IgnoreEOS = r.boolean(top.Get("ignore_eos"))
	if so := top.Get("stream_options"); so != nil && so.Type() != fastjson.TypeNull {
		o, err := so.Object()
		if err != nil || !plainKeys(o, "include_usage") {
			return nil
		}
		d.IncludeUsage = r.boolean(o.Get("include_usage"))
	}
	if !r.ok {
		return nil
	}
	return d
}

// commonShape reports whether the request holds only the fields the fast
// path reads, sampling in range, and nothing the strict decoder must
// judge.
func commonShape(top *fastjson.Object) bool {
	if !plainKeys(top, "model", "messages", "prompt", "max_tokens", "max_completion_tokens",
		"seed", "stream", "stream_options", "ignore_eos", "stop", "n",
		"temperature", "top_p", "presence_penalty", "frequency_penalty", "top_logprobs", "logprobs",
		"tool_choice", "response_format") || !samplingInRange(top) {
		return false
	}
	// Constraints the simulator may refuse are the strict decoder's to
	// judge.
	if top.Get("tool_choice") != nil || top.Get("response_format") != nil {
		return false
	}
	// What shapes a reasoning model's thinking, and a priority, are read
	// by the strict decoder too (rare, and a mistake in them is a 400).
	return !hasKeyFold(top, "reasoning_effort", "chat_template_kwargs", "tools", "priority")
}

// fastReader reads fastjson values, remembering whether any was not what
// encoding/json would have read alike.
type fastReader struct{ ok bool }

// str is v's string. fastjson leaves a lone surrogate escape as written
// where encoding/json puts U+FFFD, so a backslash left after unescaping
// (rare in text) sends the request to the strict decoder.
func (r *fastReader) str(v *fastjson.Value) string {
	b, err := v.StringBytes()
	if err != nil || !utf8.Valid(b) || bytes.IndexByte(b, '\\') >= 0 {
		r.ok = false
	}
	return string(b)
}

// boolean is v's value, false when absent or null.
func (r *fastReader) boolean(v *fastjson.Value) bool {
	if v == nil || v.Type() == fastjson.TypeNull {
		return false
	}
	b, err := v.Bool()
	r.ok = r.ok && err == nil
	return b
}

// messages reads plain chat messages (role and text content) into d.
func (r *fastReader) messages(d *decoded, msgs *fastjson.Value) bool {
	if msgs == nil {
		return false
	}
	items, err := msgs.Array()
	if err != nil || len(items) == 0 {
		return false
	}
	d.Gen = GenRequest{Chat: true, Model: d.Model, Messages: make([]Message, len(items))}
	for i, it := range items {
		o, err := it.Object()
		if err != nil || !plainKeys(o, "role", "content") || o.Get("role") == nil || o.Get("content") == nil || hasKeyFold(o, "tool_calls") {
			return false
		}
		role, text := r.str(o.Get("role")), r.str(o.Get("content"))
		switch role {
		case "system", "user", "assistant", "developer", "tool":
		default:
			return false
		}
		d.Gen.Messages[i] = Message{Role: role, Text: text}
	}
	return true
}

// commonLimits reads the answer's bounds (max tokens, seed, n, stop) into
// d; false sends the request to the strict decoder.
func commonLimits(d *decoded, top *fastjson.Object) bool {
	for _, key := range []string{"max_tokens", "max_completion_tokens"} {
		if n := top.Get(key); n != nil && n.Type() != fastjson.TypeNull {
			mt, err := n.Int()
			if err != nil || mt < 1 {
				return false
			}
			d.Gen.MaxTokens = &mt
		}
	}
	if s := top.Get("seed"); s != nil && s.Type() != fastjson.TypeNull {
		seed, err := s.Int64()
		if err != nil {
			return false
		}
		d.Gen.Seed = &seed
	}
	if n := top.Get("n"); n != nil && n.Type() != fastjson.TypeNull {
		if k, err := n.Int(); err != nil || k != 1 {
			return false
		}
	}
	s := top.Get("stop")
	return s == nil || s.Type() == fastjson.TypeNull
}

// samplingInRange reports whether the sampling parameters present are of
// the right type and within range (see apiRequest.checkSampling); anything
// else goes to the strict decoder, which names the parameter at fault.
func samplingInRange(top *fastjson.Object) bool {
	for _, r := range []struct {
		key    string
		lo, hi float64
	}{{"temperature", 0, 2}, {"top_p", 0, 1}, {"presence_penalty", -2, 2}, {"frequency_penalty", -2, 2}} {
		v := top.Get(r.key)
		if v == nil || v.Type() == fastjson.TypeNull {
			continue
		}
		f, err := v.Float64()
		if err != nil || v.Type() != fastjson.TypeNumber || f < r.lo || f > r.hi {
			return false
		}
	}
	if v := top.Get("top_logprobs"); v != nil && v.Type() != fastjson.TypeNull {
		n, err := v.Int()
		if err != nil || n < 0 || n > 20 {
			return false
		}
	}
	if v := top.Get("logprobs"); v != nil && v.Type() != fastjson.TypeNull && v.Type() != fastjson.TypeTrue && v.Type() != fastjson.TypeFalse {
		return false
	}
	return true
}

// plainKeys reports whether every key of o that encoding/json would match
// to one of known (it matches case-insensitively, and the last duplicate
// wins) is spelled exactly so and appears once. Other ASCII keys are
// ignored by both decoders; a key with other bytes is left to the strict
// decoder, whose matching folds Unicode too.
func plainKeys(o *fastjson.Object, known ...string) bool {
	var seen uint32
	ok := true
	o.Visit(func(key []byte, _ *fastjson.Value) {
		for _, c := range key {
			if c >= utf8.RuneSelf {
				ok = false
				return
			}
		}
		for i, k := range known {
			if !equalFoldASCII(key, k) {
				continue
			}
			if string(key) != k || seen&(1<<i) != 0 {
				ok = false
			}
			seen |= 1 << i
		}
	})
	return ok
}

func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// hasKeyFold reports whether o has any of keys, in any ASCII case
// (encoding/json matches keys so).
func hasKeyFold(o *fastjson.Object, keys ...string) bool {
	found := false
	o.Visit(func(key []byte, _ *fastjson.Value) {
		for _, k := range keys {
			if equalFoldASCII(key, k) {
				found = true
			}
		}
	})
	return found
}
