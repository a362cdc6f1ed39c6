package content

import (
	"unicode"
	"unicode/utf8"
)

// The tokenizer splits text the way GPT-2-style regex tokenizers do, in
// this order of preference at each position:
//
//	'(?:[sdmt]|ll|ve|re)     contractions
//	 ?<one CJK character>    CJK ideographs, kana and Hangul, one per token
//	 ?<letters>+             words, with an optional leading space
//	 ?<digit>{1,3}           numbers in groups of up to three digits
//	 ?<punctuation>+         runs of anything that is neither space nor word
//	\s+(?!\S)                whitespace, leaving the last space for the next word
//	\s+                      other whitespace (e.g. a newline before a word)
//	.                        anything else, so tokenizing is lossless
//
// It is written as a scanner rather than a regular expression because Go's
// regexp has no lookahead, and because a scanner counts a long prompt's
// tokens several times faster.

// nextToken returns the end of the token that starts at i in s.
func nextToken(s string, i int) int {
	c := s[i]
	if c == '\'' {
		if n := contraction(s[i+1:]); n > 0 {
			return i + 1 + n
		}
	}
	j := i
	if c == ' ' && i+1 < len(s) {
		j = i + 1
	}
	if end := wordLike(s, j); end > j {
		return end
	}
	r, size := decodeRune(s, i)
	if isSpace(r) {
		k := i + size
		last := size
		for k < len(s) {
			r2, sz := decodeRune(s, k)
			if !isSpace(r2) {
				break
			}
			k += sz
			last = sz
		}
		if k == len(s) || k-i == last {
			return k
		}
		return k - last
	}
	return i + size
}

// wordLike matches the CJK, letter, digit and punctuation rules at j.
func wordLike(s string, j int) int {
	if j >= len(s) {
		return j
	}
	r, size := decodeRune(s, j)
	switch {
	case r >= 0x2E80 && isCJK(r):
		return j + size
	case isLetter(r):
		k := j + size
		for k < len(s) {
			if c := s[k]; c < utf8.RuneSelf {
				// ASCII, most text: a letter or the word's end, without a
				// call per byte.
				if c|0x20 < 'a' || c|0x20 > 'z' {
					break
				}
				k++
				continue
			}
			r2, sz := utf8.DecodeRuneInString(s[k:])
			if !isLetter(r2) || isCJK(r2) {
				break
			}
			k += sz
		}
		return k
	case isDigit(r):
		k, n := j+size, 1
		for k < len(s) && n < 3 {
			r2, sz := decodeRune(s, k)
			if !isDigit(r2) {
				break
			}
			k += sz
			n++
		}
		return k
	case isPunct(r):
		k := j + size
		for k < len(s) {
			r2, sz := decodeRune(s, k)
			if !isPunct(r2) {
				break
			}
			k += sz
		}
		return k
	}
	return j
}

func contraction(s string) int {
	if len(s) == 0 {
		return 0
	}
	switch lower(s[0]) {
	case 's', 'd', 'm', 't':
		return 1
	}
	if len(s) >= 2 {
		switch string([]byte{lower(s[0]), lower(s[1])}) {
		case "ll", "ve", "re":
			return 2
		}
	}
	return 0
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func decodeRune(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\v' || r == '\f'
	}
	return unicode.IsSpace(r)
}

func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsDigit(r)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
	}
	return unicode.IsLetter(r) || unicode.IsMark(r)
}

// isPunct is the complement of space and word characters (letters, digits,
// marks and the underscore).
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r != '_' && !isSpace(r) && !isDigit(r) && !isLetter(r)
	}
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && !unicode.IsNumber(r)
}

func isCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// Tokenize splits s into tokens; joining them gives s back.
func Tokenize(s string) []string {
	out := make([]string, 0, len(s)/4+1)
	for i := 0; i < len(s); {
		j := nextToken(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// CountTokens counts the tokens of s without building them.
func CountTokens(s string) int {
	n := 0
	for i := 0; i < len(s); n++ {
		i = nextToken(s, i)
	}
	return n
}

// TokenID is a stable identifier of a token string (64-bit FNV-1a), so the
// same text always gives the same ids and prefix-cache blocks.
func TokenID(tok string) uint64 {
	return fnvString(fnvOffset, tok)
}

// fnvString continues the FNV-1a hash h over s's bytes.
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// AppendTokenIDs appends the ids of s's tokens to dst. An ASCII word,
// with or without its leading space (most of any prompt), is scanned and
// hashed in one pass; anything else goes through nextToken. Both give the
// same ids (TestAppendTokenIDsMatchesTokenize).
func AppendTokenIDs(dst []uint64, s string) []uint64 {
	for i := 0; i < len(s); {
		if end, id, ok := asciiWord(s, i); ok {
			dst = append(dst, id)
			i = end
			continue
		}
		j := nextToken(s, i)
		dst = append(dst, TokenID(s[i:j]))
		i = j
	}
	return dst
}

// asciiWord matches, at i, an optional space then ASCII letters ending
// at an ASCII byte or the text's end, and hashes it as TokenID does. It
// declines (ok false) anything nextToken might split otherwise: no
// letter, or a letter run that meets a non-ASCII byte, which may be a
// letter continuing the word.
func asciiWord(s string, i int) (end int, id uint64, ok bool) {
	h := uint64(fnvOffset)
	k := i
	if s[k] == ' ' {
		h = (h ^ ' ') * fnvPrime
		k++
	}
	start := k
	for k < len(s) {
		c := s[k]
		if c|0x20 < 'a' || c|0x20 > 'z' {
			break
		}
		h = (h ^ uint64(c)) * fnvPrime
		k++
	}
	if k == start || k < len(s) && s[k] >= 0x80 {
		return 0, 0, false
	}
	return k, h, true
}

// fnvOffset and fnvPrime are 64-bit FNV-1a's.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)
