package hftokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The split patterns of GPT-2, of Llama 3 (cl100k's) and of Qwen 2 and 3
// are scanned by hand: they are what most served models use, and a
// backtracking engine spends most of a count on them. Each scanner
// follows its pattern's alternatives in order, as the engine does, and a
// differential test holds it to the engine on random text.
const (
	llama3Split = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwenSplit   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// scanner cuts text into the matches of one known pattern; every
// position of any text starts a match of these patterns, so the matches
// tile the text and a scanner only says where each one ends.
type scanner func(s string, i int) int

func (sc scanner) find(s string) [][2]int {
	out := make([][2]int, 0, len(s)/4+1)
	for i := 0; i < len(s); {
		end := sc(s, i)
		out = append(out, [2]int{i, end})
		i = end
	}
	return out
}

// knownScanner returns the hand scanner for pattern, if there is one.
func knownScanner(pattern string) (scanner, bool) {
	switch pattern {
	case gpt2Split:
		return scanGPT2, true
	case llama3Split:
		return func(s string, i int) int { return scanTiktoken(s, i, 3) }, true
	case qwenSplit:
		return func(s string, i int) int { return scanTiktoken(s, i, 1) }, true
	}
	return nil, false
}

func isL(r rune) bool { return unicode.IsLetter(r) }
func isN(r rune) bool { return unicode.In(r, unicode.Nd, unicode.Nl, unicode.No) }

// isOther is [^\s\p{L}\p{N}].
func isOther(r rune) bool { return !unicode.IsSpace(r) && !isL(r) && !isN(r) }

func at(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(s[i:])
}

// run returns the end of the run of characters satisfying f from i.
func run(s string, i int, f func(rune) bool) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !f(r) {
			break
		}
		i += size
	}
	return i
}

// contraction matches 's 't 're 've 'm 'll 'd at i (s[i] is '), case
// sensitive or not, and returns its end or −1.
func contraction(s string, i int, fold bool) int {
	lower := func(j int) byte {
		if j >= len(s) {
			return 0
		}
		c := s[j]
		if fold && c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		return c
	}
	switch c := lower(i + 1); c {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if lower(i+2) == 'e' {
			return i + 3
		}
	case 'l':
		if lower(i+2) == 'l' {
			return i + 3
		}
	}
	return -1
}

// spaces matches the three whitespace alternatives that close these
// patterns, \s*[\r\n]+ (when newlines says so), \s+(?!\S) and \s+.
func spaces(s string, i int, newlines bool) int {
	end := run(s, i, unicode.IsSpace)
	if newlines {
		last := -1
		for j := i; j < end; {
			r, size := utf8.DecodeRuneInString(s[j:])
			if r == '\r' || r == '\n' {
				last = j + size
			}
			j += size
		}
		if last > 0 {
			return last
		}
	}
	if end == len(s) {
		return end
	}
	// Followed by a non-space: leave the last space for the next match,
	// unless it is the only one.
	_, size := utf8.DecodeLastRuneInString(s[i:end])
	if end-size > i {
		return end - size
	}
	return end
}

// scanTiktoken is llama3Split (digits 3) or qwenSplit (digits 1).
func scanTiktoken(s string, i int, digits int) int {
	r, size := at(s, i)
	if r == '\'' {
		if end := contraction(s, i, true); end > 0 {
			return end
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isL(r) {
		return run(s, i+size, isL)
	}
	if r != '\r' && r != '\n' && !isN(r) {
		if r2, _ := at(s, i+size); r2 >= 0 && isL(r2) {
			return run(s, i+size, isL)
		}
	}
	// \p{N}{1,digits}
	if isN(r) {
		j := i
		for n := 0; n < digits; n++ {
			r2, sz := at(s, j)
			if r2 < 0 || !isN(r2) {
				break
			}
			j += sz
		}
		return j
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	j := i
	if r == ' ' {
		j += size
	}
	if r2, _ := at(s, j); r2 >= 0 && isOther(r2) {
		j = run(s, j, isOther)
		return run(s, j, func(r rune) bool { return r == '\r' || r == '\n' })
	}
	return spaces(s, i, true)
}

// scanGPT2 is gpt2Split.
func scanGPT2(s string, i int) int {
	r, size := at(s, i)
	if r == '\'' {
		if end := contraction(s, i, false); end > 0 {
			return end
		}
	}
	j := i
	if r == ' ' {
		j += size
	}
	if r2, _ := at(s, j); r2 >= 0 {
		switch {
		case isL(r2):
			return run(s, j, isL)
		case isN(r2):
			return run(s, j, isN)
		case isOther(r2):
			return run(s, j, isOther)
		}
	}
	return spaces(s, i, false)
}
