package hftokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// matchTimeout bounds one search: the library's patterns never backtrack
// far, so a pattern that runs this long on one piece is hostile.
const matchTimeout = 5 * time.Second

// finder finds the non-overlapping matches of a pattern, as byte ranges.
type finder interface {
	find(s string) [][2]int
}

// literal matches a fixed string (a pattern's {"String": ...} form).
type literal string

func (l literal) find(s string) [][2]int {
	var out [][2]int
	if l == "" {
		return nil
	}
	for i := 0; i <= len(s)-len(l); {
		j := strings.Index(s[i:], string(l))
		if j < 0 {
			break
		}
		out = append(out, [2]int{i + j, i + j + len(l)})
		i += j + len(l)
	}
	return out
}

// regex is a {"Regex": ...} pattern. The library compiles these with
// Oniguruma; regexp2 speaks the same dialect for the constructs tokenizer
// files use (look-ahead, \p{..} classes, inline (?i:..) groups), with the
// same Unicode \s.
type regex struct {
	re *regexp2.Regexp
}

func compileRegex(pattern string) (*regex, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %v", pattern, err)
	}
	re.MatchTimeout = matchTimeout
	return &regex{re: re}, nil
}

// find returns the matches as byte offsets (regexp2 counts in runes).
// Empty matches are skipped, as the library's iterator advances past them.
func (r *regex) find(s string) [][2]int {
	var out [][2]int
	m, err := r.re.FindStringMatch(s)
	byteAt, runeAt := 0, 0
	toByte := func(runeIdx int) int {
		for runeAt < runeIdx && byteAt < len(s) {
			_, size := utf8.DecodeRuneInString(s[byteAt:])
			byteAt += size
			runeAt++
		}
		return byteAt
	}
	for m != nil && err == nil {
		if m.Length > 0 {
			start := toByte(m.Index)
			end := toByte(m.Index + m.Length)
			out = append(out, [2]int{start, end})
		}
		m, err = r.re.FindNextMatch(m)
	}
	return out
}

// parsePattern reads {"String": s} or {"Regex": r}.
func parsePattern(raw json.RawMessage) (finder, error) {
	var p struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("pattern: %v", err)
	}
	switch {
	case p.String != nil && p.Regex == nil:
		if *p.String == "" {
			return nil, errors.New("pattern: an empty String pattern")
		}
		return literal(*p.String), nil
	case p.Regex != nil && p.String == nil:
		if *p.Regex == "" {
			return nil, errors.New("pattern: an empty Regex pattern")
		}
		if sc, ok := knownScanner(*p.Regex); ok {
			return sc, nil
		}
		return compileRegex(*p.Regex)
	}
	return nil, errors.New(`pattern: want {"String": ...} or {"Regex": ...}`)
}

// runeFinder matches single characters that satisfy a predicate.
type runeFinder func(rune) bool

func (f runeFinder) find(s string) [][2]int {
	var out [][2]int
	for i, r := range s {
		if f(r) {
			out = append(out, [2]int{i, i + utf8.RuneLen(r)})
		}
	}
	return out
}
