package hftokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// parseNormalizer reads tokenizer.json's "normalizer" (null: none).
func parseNormalizer(raw json.RawMessage, depth int) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	if depth > maxDepth {
		return nil, errors.New("normalizer: sequences nested too deep")
	}
	typ, err := typeOf(raw, "normalizer")
	if err != nil {
		return nil, err
	}
	if typ == "Sequence" {
		return parseNormSequence(raw, depth)
	}
	if parse, ok := normalizers[typ]; ok {
		return parse(raw)
	}
	if typ == "Precompiled" {
		return nil, errors.New("normalizer Precompiled (a SentencePiece character map, as T5 and XLM-R use) is not one knee applies; pass a byte-level or Metaspace tokenizer, or leave out --tokenizer to count against the server")
	}
	return nil, fmt.Errorf("normalizer %q is not one knee can apply exactly", typ)
}

// fixed is a normalizer that has no settings.
func fixed(n normalizer) func(json.RawMessage) (normalizer, error) {
	return func(json.RawMessage) (normalizer, error) { return n, nil }
}

// normalizers reads each normalizer knee applies exactly, by its type in
// tokenizer.json (Sequence, which nests them, aside).
var normalizers = map[string]func(json.RawMessage) (normalizer, error){
	"NFC":          fixed(unicodeForm{norm.NFC}),
	"NFD":          fixed(unicodeForm{norm.NFD}),
	"NFKC":         fixed(unicodeForm{norm.NFKC}),
	"NFKD":         fixed(unicodeForm{norm.NFKD}),
	"Lowercase":    fixed(lowercase{}),
	"StripAccents": fixed(stripAccents{}),
	"Nmt":          fixed(nmt{}),
	"ByteLevel":    fixed(byteLevelNormalizer{}),
	"Strip": func(raw json.RawMessage) (normalizer, error) {
		var v struct {
			Left  *bool `json:"strip_left"`
			Right *bool `json:"strip_right"`
		}
		if err := strictUnmarshal(raw, &v, "normalizer Strip"); err != nil {
			return nil, err
		}
		return strip{left: v.Left == nil || *v.Left, right: v.Right == nil || *v.Right}, nil
	},
	"Prepend": func(raw json.RawMessage) (normalizer, error) {
		var v struct {
			Prepend *string `json:"prepend"`
		}
		if err := strictUnmarshal(raw, &v, "normalizer Prepend"); err != nil {
			return nil, err
		}
		if v.Prepend == nil {
			return nil, errors.New(`normalizer Prepend: missing "prepend"`)
		}
		return prepend(*v.Prepend), nil
	},
	"Replace":        parseReplace,
	"BertNormalizer": parseBertNormalizer,
}

// parseNormSequence reads a Sequence's normalizers, in order.
func parseNormSequence(raw json.RawMessage, depth int) (normalizer, error) {
	var v struct {
		Normalizers []json.RawMessage `json:"normalizers"`
	}
	if err := strictUnmarshal(raw, &v, "normalizer Sequence"); err != nil {
		return nil, err
	}
	var seq normSequence
	for _, r := range v.Normalizers {
		n, err := parseNormalizer(r, depth+1)
		if err != nil {
			return nil, err
		}
		if n != nil {
			seq = append(seq, n)
		}
	}
	return seq, nil
}

func parseReplace(raw json.RawMessage) (normalizer, error) {
	var v struct {
		Pattern json.RawMessage `json:"pattern"`
		Content *string         `json:"content"`
	}
	if err := strictUnmarshal(raw, &v, "normalizer Replace"); err != nil {
		return nil, err
	}
	if v.Content == nil {
		return nil, errors.New(`normalizer Replace: missing "content"`)
	}
	f, err := parsePattern(v.Pattern)
	if err != nil {
		return nil, fmt.Errorf("normalizer Replace: %v", err)
	}
	return replace{pattern: f, content: *v.Content}, nil
}

func parseBertNormalizer(raw json.RawMessage) (normalizer, error) {
	var v struct {
		CleanText          *bool `json:"clean_text"`
		HandleChineseChars *bool `json:"handle_chinese_chars"`
		StripAccents       *bool `json:"strip_accents"`
		Lowercase          *bool `json:"lowercase"`
	}
	if err := strictUnmarshal(raw, &v, "normalizer BertNormalizer"); err != nil {
		return nil, err
	}
	b := bert{clean: boolOr(v.CleanText, true), chinese: boolOr(v.HandleChineseChars, true), lower: boolOr(v.Lowercase, true)}
	b.accents = boolOr(v.StripAccents, b.lower)
	return b, nil
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

type normSequence []normalizer

func (s normSequence) normalize(t string) string {
	for _, n := range s {
		t = n.normalize(t)
	}
	return t
}

type unicodeForm struct{ f norm.Form }

func (u unicodeForm) normalize(s string) string { return u.f.String(s) }

// lowercase is Rust's char::to_lowercase, applied character by character:
// Unicode's simple mappings, except İ, whose lower case is two characters.
type lowercase struct{}

func (lowercase) normalize(s string) string {
	return strings.Map(unicode.ToLower, strings.ReplaceAll(s, "İ", "i\u0307"))
}

type stripAccents struct{}

func (stripAccents) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsMark(r) {
			return -1
		}
		return r
	}, s)
}

type strip struct{ left, right bool }

func (st strip) normalize(s string) string {
	if st.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if st.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

type prepend string

func (p prepend) normalize(s string) string {
	if s == "" {
		return s
	}
	return string(p) + s
}

type replace struct {
	pattern finder
	content string
}

func (r replace) normalize(s string) string {
	ms := r.pattern.find(s)
	if len(ms) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m[0]])
		b.WriteString(r.content)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// nmt is SentencePiece's nmt_nfkc clean-up without the NFKC: control
// characters dropped, odd spaces made plain.
type nmt struct{}

func (nmt) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0x1 && r <= 0x8, r == 0xB, r >= 0xE && r <= 0x1F, r == 0x7F, r == 0x8F, r == 0x9F:
			return -1
		case r == 0x9, r == 0xA, r == 0xC, r == 0xD, r == 0x1680, r >= 0x200B && r <= 0x200F,
			r == 0x2028, r == 0x2029, r == 0x2581, r == 0xFEFF, r == 0xFFFD:
			return ' '
		}
		return r
	}, s)
}

type byteLevelNormalizer struct{}

func (byteLevelNormalizer) normalize(s string) string { return byteLevelMap(s) }

// bert is BERT's normalizer: control characters removed, whitespace made
// plain, CJK ideographs spaced apart, accents stripped, lower case.
type bert struct{ clean, chinese, accents, lower bool }

func (b bert) normalize(s string) string {
	if b.clean {
		s = strings.Map(func(r rune) rune {
			tab := r == '\t' || r == '\n' || r == '\r'
			switch {
			case r == 0, r == 0xFFFD, !tab && unicode.In(r, unicode.C):
				return -1
			case tab || unicode.IsSpace(r):
				return ' '
			}
			return r
		}, s)
	}
	if b.chinese {
		var sb strings.Builder
		for _, r := range s {
			if isChineseChar(r) {
				sb.WriteByte(' ')
				sb.WriteRune(r)
				sb.WriteByte(' ')
			} else {
				sb.WriteRune(r)
			}
		}
		s = sb.String()
	}
	if b.accents {
		// BERT strips only non-spacing marks; the StripAccents normalizer
		// strips every mark.
		s = strings.Map(func(r rune) rune {
			if unicode.Is(unicode.Mn, r) {
				return -1
			}
			return r
		}, norm.NFD.String(s))
	}
	if b.lower {
		s = lowercase{}.normalize(s)
	}
	return s
}

func isChineseChar(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF, r >= 0x20000 && r <= 0x2A6DF,
		r >= 0x2A700 && r <= 0x2B73F, r >= 0x2B740 && r <= 0x2B81F, r >= 0x2B920 && r <= 0x2CEAF,
		r >= 0xF900 && r <= 0xFAFF, r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}
