package workload

// fillerVocabulary is fillerWords, then PadWord: the words a request said
// as words (Synthetic.RequestWords) indexes.
var fillerVocabulary = append(append([]string(nil), fillerWords...), PadWord)

// padIndex is PadWord's index in fillerVocabulary.
var padIndex = uint16(len(fillerWords))

// FillerVocabulary returns the words of the texts synthetic requests are
// made of, in the order RequestWords indexes them. The slice is shared:
// read it, never write it.
func FillerVocabulary() []string { return fillerVocabulary }

// RequestWords says request i as Request does, but with its one message's
// text as words (indices into FillerVocabulary, joined by single spaces)
// appended to buf instead of written out: a predictor that needs the
// text's tokens and hash, not its bytes, is spared writing it. The
// message's Content is left empty. ok is false when the text is not
// filler words (a Vocabulary's).
func (s Synthetic) RequestWords(i int, buf []uint16) (req Request, words []uint16, ok bool) {
	if s.Vocabulary != nil {
		return Request{}, buf, false
	}
	in, out := s.Lengths(i)
	seed := s.Seed ^ hashString(s.Nonce)
	words = buf
	if s.Prefix.Tokens > 0 {
		words = s.Prefix.appendWords(words, s.prefixWords(), s.Seed, seed, s.Prefix.Of(s.Seed, i))
	}
	words = appendFillerText(words, in, s.WordsPerToken, s.Seed, seed, uint64(i), s.Pad)
	return Request{Messages: []Message{{Role: "user"}}, MaxTokens: out}, words, true
}

// WordSource is a Source whose requests can be said as words.
type WordSource interface {
	Source
	RequestWords(i int, buf []uint16) (req Request, words []uint16, ok bool)
}

// WordText is the text words stand for.
func WordText(words []uint16) string { return writeWords(words) }
