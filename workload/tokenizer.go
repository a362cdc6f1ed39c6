package workload

import (
	"context"
	"fmt"
	"os"

	"github.com/kneebench/knee/workload/hftokenizer"
)

// HFTokenizer counts tokens with a Hugging Face tokenizer.json, the file
// that sits beside every model vLLM serves, so dataset lengths are the
// model's own without asking the server. It reads local files only:
// nothing is fetched.
type HFTokenizer struct {
	tk   *hftokenizer.Tokenizer
	path string
}

// LoadTokenizer reads a tokenizer.json, a model folder holding one, or a
// model id found in the local Hugging Face cache (see hftokenizer.Resolve).
// Cancelling ctx ends a wait on a FIFO.
func LoadTokenizer(ctx context.Context, arg string) (*HFTokenizer, error) {
	path, err := hftokenizer.Resolve(arg, os.Getenv)
	if err != nil {
		return nil, err
	}
	tk, err := hftokenizer.Load(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("reading tokenizer %s: %w", path, err)
	}
	return &HFTokenizer{tk: tk, path: path}, nil
}

// Count implements TokenCounter: the tokens of text, without the special
// tokens a chat template adds around it.
func (h *HFTokenizer) Count(text string) int { return h.tk.Count(text) }

// Path is the file the tokenizer came from.
func (h *HFTokenizer) Path() string { return h.path }
