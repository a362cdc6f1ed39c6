package hftokenizer

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// wordPiece is BERT's greedy longest-match-first model.
type wordPiece struct {
	vocab    map[string]int
	unk      int
	prefix   string
	maxChars int
}

func parseWordPiece(raw json.RawMessage) (*wordPiece, error) {
	var v struct {
		UnkToken *string         `json:"unk_token"`
		Prefix   *string         `json:"continuing_subword_prefix"`
		MaxChars *int            `json:"max_input_chars_per_word"`
		Vocab    json.RawMessage `json:"vocab"`
	}
	if err := strictUnmarshal(raw, &v, "model WordPiece"); err != nil {
		return nil, err
	}
	vocab, err := parseVocabMap(v.Vocab, "model WordPiece")
	if err != nil {
		return nil, err
	}
	w := &wordPiece{vocab: vocab, prefix: "##", maxChars: 100}
	if v.Prefix != nil {
		w.prefix = *v.Prefix
	}
	if v.MaxChars != nil {
		w.maxChars = *v.MaxChars
	}
	unk := "[UNK]"
	if v.UnkToken != nil {
		unk = *v.UnkToken
	}
	id, ok := vocab[unk]
	if !ok {
		return nil, fmt.Errorf("model WordPiece: unk_token %q is not in the vocabulary", unk)
	}
	w.unk = id
	return w, nil
}

func (w *wordPiece) tokenID(s string) (int, bool) {
	id, ok := w.vocab[s]
	return id, ok
}

func (w *wordPiece) tokenize(dst []int, word string) []int {
	if utf8.RuneCountInString(word) > w.maxChars {
		return append(dst, w.unk)
	}
	mark := len(dst)
	for start := 0; start < len(word); {
		end := len(word)
		found := -1
		for start < end {
			sub := word[start:end]
			if start > 0 {
				sub = w.prefix + sub
			}
			if id, ok := w.vocab[sub]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return append(dst[:mark], w.unk)
		}
		dst = append(dst, found)
		start = end
	}
	return dst
}

// wordLevel maps whole words to ids.
type wordLevel struct {
	vocab map[string]int
	unk   int
}

func parseWordLevel(raw json.RawMessage) (*wordLevel, error) {
	var v struct {
		UnkToken *string         `json:"unk_token"`
		Vocab    json.RawMessage `json:"vocab"`
	}
	if err := strictUnmarshal(raw, &v, "model WordLevel"); err != nil {
		return nil, err
	}
	vocab, err := parseVocabMap(v.Vocab, "model WordLevel")
	if err != nil {
		return nil, err
	}
	w := &wordLevel{vocab: vocab, unk: -1}
	if v.UnkToken != nil {
		id, ok := vocab[*v.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model WordLevel: unk_token %q is not in the vocabulary", *v.UnkToken)
		}
		w.unk = id
	}
	return w, nil
}

func (w *wordLevel) tokenID(s string) (int, bool) {
	id, ok := w.vocab[s]
	return id, ok
}

func (w *wordLevel) tokenize(dst []int, word string) []int {
	if id, ok := w.vocab[word]; ok {
		return append(dst, id)
	}
	return append(dst, max(w.unk, 0))
}
