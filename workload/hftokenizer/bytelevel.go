package hftokenizer

import "strings"

// gpt2Split is the split pattern GPT-2's byte-level pre-tokenizer uses
// when use_regex is set.
const gpt2Split = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// byteChars maps every byte to the printable character GPT-2's byte-level
// alphabet stands it for: printable Latin-1 bytes as themselves, the rest
// shifted to U+0100 and on.
var byteChars = func() [256]string {
	var out [256]string
	n := 0
	for b := 0; b < 256; b++ {
		switch {
		case b >= '!' && b <= '~', b >= 0xA1 && b <= 0xAC, b >= 0xAE:
			out[b] = string(rune(b))
		default:
			out[b] = string(rune(256 + n))
			n++
		}
	}
	return out
}()

// byteLevelMap spells every byte of s in the byte-level alphabet.
func byteLevelMap(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 2)
	for i := 0; i < len(s); i++ {
		b.WriteString(byteChars[s[i]])
	}
	return b.String()
}

// byteLevelPre is the ByteLevel pre-tokenizer: an optional leading space,
// GPT-2's split, then the byte-level alphabet.
type byteLevelPre struct {
	prefixSpace, useRegex bool
}

func (bl byteLevelPre) preTokenize(ps []piece) []piece {
	return eachPiece(ps, func(p piece) []piece {
		if bl.prefixSpace && !strings.HasPrefix(p.text, " ") {
			p.text = " " + p.text
		}
		words := []piece{p}
		if bl.useRegex {
			words = cut(p, scanner(scanGPT2).find(p.text), isolated, false)
		}
		for i := range words {
			words[i].text = byteLevelMap(words[i].text)
		}
		return words
	})
}
