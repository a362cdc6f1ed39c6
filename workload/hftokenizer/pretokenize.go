package hftokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// behavior is what a split does with the matches it cuts at (the
// library's SplitDelimiterBehavior).
type behavior int

const (
	removed behavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(s string) (behavior, error) {
	switch s {
	case "Removed":
		return removed, nil
	case "Isolated":
		return isolated, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("split behavior %q: want Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous", s)
}

// span is a range of a piece and whether the pattern matched it.
type span struct {
	start, end int
	match      bool
}

// cut splits p at the matches, as NormalizedString.split does, and drops
// empty pieces as PreTokenizedString.split does.
func cut(p piece, ms [][2]int, b behavior, invert bool) []piece {
	s := p.text
	var sp []span
	if s == "" {
		sp = []span{{0, 0, false}}
	} else {
		prev := 0
		for _, m := range ms {
			if prev != m[0] {
				sp = append(sp, span{prev, m[0], false})
			}
			sp = append(sp, span{m[0], m[1], true})
			prev = m[1]
		}
		if prev != len(s) {
			sp = append(sp, span{prev, len(s), false})
		}
	}
	if invert {
		for i := range sp {
			sp[i].match = !sp[i].match
		}
	}
	// keep holds the ranges to keep; a removed match is marked drop.
	type kept struct {
		start, end int
		drop       bool
	}
	var keep []kept
	switch b {
	case isolated:
		for _, x := range sp {
			keep = append(keep, kept{x.start, x.end, false})
		}
	case removed:
		for _, x := range sp {
			keep = append(keep, kept{x.start, x.end, x.match})
		}
	case contiguous:
		prevMatch := false
		for _, x := range sp {
			if x.match == prevMatch && len(keep) > 0 {
				keep[len(keep)-1].end = x.end
			} else {
				keep = append(keep, kept{x.start, x.end, false})
			}
			prevMatch = x.match
		}
	case mergedWithPrevious:
		prevMatch := false
		for _, x := range sp {
			if x.match && !prevMatch && len(keep) > 0 {
				keep[len(keep)-1].end = x.end
			} else {
				keep = append(keep, kept{x.start, x.end, false})
			}
			prevMatch = x.match
		}
	case mergedWithNext:
		prevMatch := false
		for i := len(sp) - 1; i >= 0; i-- {
			x := sp[i]
			if x.match && !prevMatch && len(keep) > 0 {
				keep[len(keep)-1].start = x.start
			} else {
				keep = append(keep, kept{x.start, x.end, false})
			}
			prevMatch = x.match
		}
		for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
			keep[i], keep[j] = keep[j], keep[i]
		}
	}
	out := make([]piece, 0, len(keep))
	for _, k := range keep {
		if k.drop || k.start == k.end {
			continue
		}
		out = append(out, piece{text: s[k.start:k.end], atStart: p.atStart && k.start == 0})
	}
	return out
}

// eachPiece applies f to every piece and joins the results.
func eachPiece(ps []piece, f func(piece) []piece) []piece {
	var out []piece
	for _, p := range ps {
		out = append(out, f(p)...)
	}
	return out
}

func parsePreTokenizer(raw json.RawMessage, depth int) (preTokenizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	if depth > maxDepth {
		return nil, errors.New("pre_tokenizer: sequences nested too deep")
	}
	typ, err := typeOf(raw, "pre_tokenizer")
	if err != nil {
		return nil, err
	}
	if typ == "Sequence" {
		return parsePreSequence(raw, depth)
	}
	if parse, ok := preTokenizers[typ]; ok {
		return parse(raw)
	}
	return nil, fmt.Errorf("pre_tokenizer %q is not one knee can apply exactly", typ)
}

// preTokenizers reads each pre-tokenizer knee applies exactly, by its
// type in tokenizer.json (Sequence, which nests them, aside).
var preTokenizers = map[string]func(json.RawMessage) (preTokenizer, error){
	"ByteLevel": func(raw json.RawMessage) (preTokenizer, error) {
		var v struct {
			AddPrefixSpace *bool `json:"add_prefix_space"`
			TrimOffsets    *bool `json:"trim_offsets"`
			UseRegex       *bool `json:"use_regex"`
		}
		if err := strictUnmarshal(raw, &v, "pre_tokenizer ByteLevel"); err != nil {
			return nil, err
		}
		return byteLevelPre{prefixSpace: boolOr(v.AddPrefixSpace, true), useRegex: boolOr(v.UseRegex, true)}, nil
	},
	"Split":     parseSplit,
	"Metaspace": parseMetaspace,
	"Whitespace": func(json.RawMessage) (preTokenizer, error) {
		return whitespace{}, nil
	},
	"WhitespaceSplit": func(json.RawMessage) (preTokenizer, error) {
		return split{pattern: runeFinder(unicode.IsSpace), behavior: removed}, nil
	},
	"BertPreTokenizer": func(json.RawMessage) (preTokenizer, error) {
		return preSequence{
			split{pattern: runeFinder(unicode.IsSpace), behavior: removed},
			split{pattern: runeFinder(isPunctuation), behavior: isolated},
		}, nil
	},
	"Punctuation":        parsePunctuation,
	"Digits":             parseDigits,
	"CharDelimiterSplit": parseCharDelimiter,
}

// parsePreSequence reads a Sequence's pre-tokenizers, in order.
func parsePreSequence(raw json.RawMessage, depth int) (preTokenizer, error) {
	var v struct {
		Pretokenizers []json.RawMessage `json:"pretokenizers"`
	}
	if err := strictUnmarshal(raw, &v, "pre_tokenizer Sequence"); err != nil {
		return nil, err
	}
	var seq preSequence
	for _, r := range v.Pretokenizers {
		p, err := parsePreTokenizer(r, depth+1)
		if err != nil {
			return nil, err
		}
		if p != nil {
			seq = append(seq, p)
		}
	}
	return seq, nil
}

func parseSplit(raw json.RawMessage) (preTokenizer, error) {
	var v struct {
		Pattern  json.RawMessage `json:"pattern"`
		Behavior string          `json:"behavior"`
		Invert   bool            `json:"invert"`
	}
	if err := strictUnmarshal(raw, &v, "pre_tokenizer Split"); err != nil {
		return nil, err
	}
	f, err := parsePattern(v.Pattern)
	if err != nil {
		return nil, fmt.Errorf("pre_tokenizer Split: %v", err)
	}
	b, err := parseBehavior(v.Behavior)
	if err != nil {
		return nil, fmt.Errorf("pre_tokenizer Split: %v", err)
	}
	return split{pattern: f, behavior: b, invert: v.Invert}, nil
}

func parsePunctuation(raw json.RawMessage) (preTokenizer, error) {
	var v struct {
		Behavior *string `json:"behavior"`
	}
	if err := strictUnmarshal(raw, &v, "pre_tokenizer Punctuation"); err != nil {
		return nil, err
	}
	b := isolated
	if v.Behavior != nil {
		var err error
		if b, err = parseBehavior(*v.Behavior); err != nil {
			return nil, fmt.Errorf("pre_tokenizer Punctuation: %v", err)
		}
	}
	return split{pattern: runeFinder(isPunctuation), behavior: b}, nil
}

func parseDigits(raw json.RawMessage) (preTokenizer, error) {
	var v struct {
		Individual bool `json:"individual_digits"`
	}
	if err := strictUnmarshal(raw, &v, "pre_tokenizer Digits"); err != nil {
		return nil, err
	}
	b := contiguous
	if v.Individual {
		b = isolated
	}
	return split{pattern: runeFinder(isNumeric), behavior: b}, nil
}

func parseCharDelimiter(raw json.RawMessage) (preTokenizer, error) {
	var v struct {
		Delimiter string `json:"delimiter"`
	}
	if err := strictUnmarshal(raw, &v, "pre_tokenizer CharDelimiterSplit"); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(v.Delimiter) != 1 {
		return nil, fmt.Errorf("pre_tokenizer CharDelimiterSplit: the delimiter %q is not one character", v.Delimiter)
	}
	d, _ := utf8.DecodeRuneInString(v.Delimiter)
	return split{pattern: runeFinder(func(r rune) bool { return r == d }), behavior: removed}, nil
}

type preSequence []preTokenizer

func (s preSequence) preTokenize(ps []piece) []piece {
	for _, p := range s {
		ps = p.preTokenize(ps)
	}
	return ps
}

// split cuts every piece at a pattern.
type split struct {
	pattern  finder
	behavior behavior
	invert   bool
}

func (sp split) preTokenize(ps []piece) []piece {
	return eachPiece(ps, func(p piece) []piece {
		return cut(p, sp.pattern.find(p.text), sp.behavior, sp.invert)
	})
}

// isPunctuation is Rust's is_ascii_punctuation or Unicode punctuation.
func isPunctuation(r rune) bool {
	return unicode.IsPunct(r) || (r < 0x80 && unicode.IsSymbol(r))
}

// isNumeric is Rust's char::is_numeric: Nd, Nl and No.
func isNumeric(r rune) bool { return unicode.In(r, unicode.Nd, unicode.Nl, unicode.No) }

// whitespace keeps runs of word characters and runs of other
// non-space characters (\w+|[^\w\s]+) and drops the spaces between.
type whitespace struct{}

func (whitespace) preTokenize(ps []piece) []piece {
	return eachPiece(ps, func(p piece) []piece {
		var ms [][2]int
		s := p.text
		kind := func(r rune) int {
			switch {
			case isWordChar(r):
				return 1
			case unicode.IsSpace(r):
				return 0
			}
			return 2
		}
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			k := kind(r)
			j := i + size
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if kind(r2) != k {
					break
				}
				j += sz
			}
			if k != 0 {
				ms = append(ms, [2]int{i, j})
			}
			i = j
		}
		return cut(p, ms, removed, true)
	})
}

// metaspace is SentencePiece's space handling: spaces become the
// replacement character (▁), one is prepended per the scheme, and words
// start at each replacement character.
type metaspace struct {
	replacement string
	scheme      string
	split       bool
}

func parseMetaspace(raw json.RawMessage) (preTokenizer, error) {
	var v struct {
		Replacement    *string `json:"replacement"`
		AddPrefixSpace *bool   `json:"add_prefix_space"`
		PrependScheme  *string `json:"prepend_scheme"`
		Split          *bool   `json:"split"`
		StrRep         *string `json:"str_rep"`
	}
	if err := strictUnmarshal(raw, &v, "pre_tokenizer Metaspace"); err != nil {
		return nil, err
	}
	if v.Replacement == nil || utf8.RuneCountInString(*v.Replacement) != 1 {
		return nil, errors.New(`pre_tokenizer Metaspace: "replacement" must be one character`)
	}
	m := metaspace{replacement: *v.Replacement, scheme: "always", split: boolOr(v.Split, true)}
	if v.PrependScheme != nil {
		switch *v.PrependScheme {
		case "always", "first", "never":
			m.scheme = *v.PrependScheme
		default:
			return nil, fmt.Errorf("pre_tokenizer Metaspace: prepend_scheme %q: want always, first or never", *v.PrependScheme)
		}
	}
	if v.AddPrefixSpace != nil && !*v.AddPrefixSpace {
		if m.scheme != "never" && v.PrependScheme != nil {
			return nil, errors.New("pre_tokenizer Metaspace: add_prefix_space false contradicts prepend_scheme")
		}
		m.scheme = "never"
	}
	return m, nil
}

func (m metaspace) preTokenize(ps []piece) []piece {
	return eachPiece(ps, func(p piece) []piece {
		t := strings.ReplaceAll(p.text, " ", m.replacement)
		if !strings.HasPrefix(t, m.replacement) && (m.scheme == "always" || (m.scheme == "first" && p.atStart)) {
			t = m.replacement + t
		}
		q := piece{text: t, atStart: p.atStart}
		if !m.split {
			return []piece{q}
		}
		return cut(q, literal(m.replacement).find(t), mergedWithNext, false)
	})
}
