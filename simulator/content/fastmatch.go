package content

import (
	"encoding/binary"
	"strings"
)

// lowerASCII lower-cases s eight bytes at a time when it is pure ASCII (the
// usual case for prompts), and falls back to strings.ToLower otherwise.
// Matching lower-cases every prompt, and a byte-at-a-time loop over a long
// prompt cost more than everything else the matcher does.
func lowerASCII(s string) string {
	n := len(s)
	var or, upper uint64
	i := 0
	for ; i+8 <= n; i += 8 {
		x := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		or |= x
		upper |= upperMask(x)
	}
	for ; i < n; i++ {
		c := s[i]
		or |= uint64(c)
		if 'A' <= c && c <= 'Z' {
			upper = 1
		}
	}
	if or&0x8080808080808080 != 0 {
		return strings.ToLower(s)
	}
	if upper == 0 {
		return s
	}
	b := make([]byte, n)
	i = 0
	for ; i+8 <= n; i += 8 {
		x := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		binary.LittleEndian.PutUint64(b[i:], x|upperMask(x)>>2)
	}
	for ; i < n; i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

// upperMask has bit 7 set in every byte of x (all ASCII) that is A–Z:
// adding 0x3f carries a byte ≥ 'A' into bit 7, adding 0x25 a byte > 'Z'.
func upperMask(x uint64) uint64 {
	const hi = 0x8080808080808080
	return (x + 0x3f3f3f3f3f3f3f3f) &^ (x + 0x2525252525252525) & hi
}

// letterRank orders lower-case letters from rare to common in English
// text; a literal is searched for by its rarest byte, so IndexByte skips
// most of a long prompt instead of stopping at every common letter.
const letterRank = "zqxjkvbpygfwmucldrhsnioate"

func byteCommonness(c byte) int {
	switch {
	case c == ' ':
		return 40
	case 'a' <= c && c <= 'z':
		return 10 + strings.IndexByte(letterRank, c)
	}
	return 0
}

// literal is a lower-cased substring with the position of its rarest byte.
type literal struct {
	s    string
	rare int
}

func newLiteral(s string) literal {
	l := literal{s: s}
	for i := 1; i < len(s); i++ {
		if byteCommonness(s[i]) < byteCommonness(s[l.rare]) {
			l.rare = i
		}
	}
	return l
}

// in reports whether the literal occurs in text (both lower-cased).
func (l literal) in(text string) bool {
	if l.s == "" {
		return true
	}
	c, r, n := l.s[l.rare], l.rare, len(l.s)
	for i := r; i < len(text); {
		j := strings.IndexByte(text[i:], c)
		if j < 0 {
			return false
		}
		start := i + j - r
		if start+n > len(text) {
			return false
		}
		if text[start:start+n] == l.s {
			return true
		}
		i += j + 1
	}
	return false
}
