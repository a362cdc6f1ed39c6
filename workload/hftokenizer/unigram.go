package hftokenizer

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"
)

// unkPenalty is how much less than the worst piece an unknown character
// scores (the library's K_UNK_PENALTY).
const unkPenalty = 10.0

// unigram is SentencePiece's unigram model: the segmentation with the
// highest total score, found by Viterbi over every vocabulary piece that
// starts at each position.
type unigram struct {
	ids          map[string]int
	scores       []float64
	maxLen       int
	unk          int // −1: none
	minScore     float64
	byteFallback bool
	byteIDs      [256]int
}

func parseUnigram(raw json.RawMessage) (*unigram, error) {
	var v struct {
		UnkID        *int              `json:"unk_id"`
		Vocab        []json.RawMessage `json:"vocab"`
		ByteFallback bool              `json:"byte_fallback"`
	}
	if err := strictUnmarshal(raw, &v, "model Unigram"); err != nil {
		return nil, err
	}
	if len(v.Vocab) == 0 {
		return nil, fmt.Errorf("model Unigram: the vocabulary is empty")
	}
	if len(v.Vocab) > maxID {
		return nil, fmt.Errorf("model Unigram: %d pieces is more than any real vocabulary", len(v.Vocab))
	}
	u := &unigram{ids: make(map[string]int, len(v.Vocab)), scores: make([]float64, len(v.Vocab)), unk: -1,
		minScore: math.Inf(1), byteFallback: v.ByteFallback}
	for i, raw := range v.Vocab {
		var pair []json.RawMessage
		var piece string
		var score float64
		if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 ||
			json.Unmarshal(pair[0], &piece) != nil || json.Unmarshal(pair[1], &score) != nil {
			return nil, fmt.Errorf("model Unigram: vocab entry %d is not [\"piece\", score]", i)
		}
		if math.IsNaN(score) || math.IsInf(score, 0) {
			return nil, fmt.Errorf("model Unigram: vocab entry %d has a score that is not finite", i)
		}
		u.ids[piece] = i
		u.scores[i] = score
		u.maxLen = max(u.maxLen, len(piece))
		u.minScore = min(u.minScore, score)
	}
	if v.UnkID != nil {
		if *v.UnkID < 0 || *v.UnkID >= len(v.Vocab) {
			return nil, fmt.Errorf("model Unigram: unk_id %d is not in the vocabulary", *v.UnkID)
		}
		u.unk = *v.UnkID
	}
	for i := range u.byteIDs {
		u.byteIDs[i] = -1
		if id, ok := u.ids[fmt.Sprintf("<0x%02X>", i)]; ok {
			u.byteIDs[i] = id
		}
	}
	return u, nil
}

func (u *unigram) tokenID(s string) (int, bool) {
	id, ok := u.ids[s]
	return id, ok
}

type bestPath struct {
	score float64
	from  int // −1: not reached
	id    int
}

func (u *unigram) tokenize(dst []int, word string) []int {
	n := len(word)
	best := make([]bestPath, n+1)
	for i := range best {
		best[i].from = -1
	}
	unkScore := u.minScore - unkPenalty
	for start := 0; start < n; {
		_, mblen := utf8.DecodeRuneInString(word[start:])
		here := best[start].score
		single := false
		for l := 1; l <= u.maxLen && start+l <= n; l++ {
			id, ok := u.ids[word[start:start+l]]
			if !ok {
				continue
			}
			t := &best[start+l]
			if c := u.scores[id] + here; t.from < 0 || c > t.score {
				t.score, t.from, t.id = c, start, id
			}
			if l == mblen {
				single = true
			}
		}
		if !single {
			t := &best[start+mblen]
			if c := unkScore + here; t.from < 0 || c > t.score {
				t.score, t.from, t.id = c, start, u.unk
			}
		}
		start += mblen
	}
	// Walk back, fusing runs of unknown characters into one piece.
	type part struct {
		start, end, id int
	}
	var parts []part
	for end := n; end > 0; {
		b := best[end]
		if b.from < 0 {
			break
		}
		if b.id == u.unk && len(parts) > 0 && parts[len(parts)-1].id == u.unk && parts[len(parts)-1].start == end {
			parts[len(parts)-1].start = b.from
		} else {
			parts = append(parts, part{b.from, end, b.id})
		}
		end = b.from
	}
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if p.id != u.unk {
			dst = append(dst, p.id)
			continue
		}
		s := word[p.start:p.end]
		if id, ok := u.ids[s]; ok {
			dst = append(dst, id)
			continue
		}
		if u.byteFallback && allIn(s, &u.byteIDs) {
			for j := 0; j < len(s); j++ {
				dst = append(dst, u.byteIDs[s[j]])
			}
			continue
		}
		dst = append(dst, max(u.unk, 0))
	}
	return dst
}

func allIn(s string, ids *[256]int) bool {
	for i := 0; i < len(s); i++ {
		if ids[s[i]] < 0 {
			return false
		}
	}
	return true
}
