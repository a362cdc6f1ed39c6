// Package hftokenizer counts tokens exactly as Hugging Face's tokenizers
// library does for a tokenizer.json, the file that sits beside every model
// vLLM and SGLang serve.
//
// It reads the file and nothing else: no network, no cgo. The pipeline is
// the library's own, in its order: added tokens are split out of the raw
// text, the rest is normalized, normalized added tokens are split out, the
// pre-tokenizer cuts words, and the model (BPE, Unigram, WordPiece or
// WordLevel) turns each word into ids. The post-processor (BOS and EOS
// markers) is left out: Count is what encode(text, add_special_tokens=False)
// returns, the unit a chat template's text is counted in.
//
// A file this package cannot read exactly (a component it does not know, a
// pattern its regular-expression engine cannot compile) is refused with an
// error that names the component, never approximated: a wrong count that
// looks right is worse than none.
package hftokenizer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kneebench/knee/results/input"
)

// MaxFileBytes bounds the tokenizer.json read. The largest real files
// (Gemma 3's 262k vocabulary) are about 33 MB.
const MaxFileBytes = 256 << 20

// Tokenizer encodes text as one tokenizer.json describes.
type Tokenizer struct {
	added *addedVocab
	norm  normalizer
	pre   preTokenizer
	model model
}

// normalizer rewrites a piece of text before it is cut into words.
type normalizer interface {
	normalize(s string) string
}

// preTokenizer cuts pieces into smaller pieces (words).
type preTokenizer interface {
	preTokenize(ps []piece) []piece
}

// model turns one word into ids, appending them to dst.
type model interface {
	tokenize(dst []int, word string) []int
	tokenID(s string) (int, bool)
}

// piece is a run of text on its way through the pipeline. atStart says
// that it begins at the first byte of the original input (Metaspace's
// "first" prepend scheme needs it).
type piece struct {
	text    string
	atStart bool
}

// Load reads and parses a tokenizer.json, at most MaxFileBytes (no real
// one is larger); cancelling ctx ends a wait on a FIFO.
func Load(ctx context.Context, path string) (*Tokenizer, error) {
	f, err := input.Open(ctx, path, MaxFileBytes, "a tokenizer.json")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A tokenizer.json is a JSON object: what opens otherwise (a device of
	// zeros, a binary) is refused before its hundreds of megabytes are
	// read.
	r := bufio.NewReader(f)
	head, _ := r.Peek(512)
	if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) > 0 && t[0] != '{' || len(head) == 0 {
		return nil, fmt.Errorf("%s is not a tokenizer.json: it does not open with a JSON object", path)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Encode returns the ids of text, without the special tokens a
// post-processor would add around it.
func (t *Tokenizer) Encode(text string) []int {
	// The library only ever sees valid UTF-8 (Python and Rust strings are).
	text = strings.ToValidUTF8(text, "\uFFFD")
	var ids []int
	for _, seg := range t.added.split(text, true, t.norm) {
		if seg.id >= 0 {
			ids = append(ids, seg.id)
			continue
		}
		words := []piece{{text: seg.text, atStart: seg.atStart}}
		if t.pre != nil {
			words = t.pre.preTokenize(words)
		}
		for _, w := range words {
			if w.text != "" {
				ids = t.model.tokenize(ids, w.text)
			}
		}
	}
	return ids
}

// Count returns how many tokens text is.
func (t *Tokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	return len(t.Encode(text))
}
