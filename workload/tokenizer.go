package workload

import (
	"fmt"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretrained"
)

// HFTokenizer counts tokens with a Hugging Face tokenizer.json, the file
// that sits beside every model vLLM serves, so dataset lengths are the
// model's own without asking the server. It reads the file only: nothing
// is fetched.
type HFTokenizer struct {
	tk   *tokenizer.Tokenizer
	path string
}

// LoadTokenizer reads a tokenizer.json.
func LoadTokenizer(path string) (*HFTokenizer, error) {
	tk, err := pretrained.FromFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading tokenizer %s: %v", path, err)
	}
	return &HFTokenizer{tk: tk, path: path}, nil
}

// Count implements TokenCounter: the tokens of text, without the special
// tokens a chat template adds around it.
func (h *HFTokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	en, err := h.tk.EncodeSingle(text, false)
	if err != nil {
		return 0
	}
	return len(en.Ids)
}

// Path is the file the tokenizer came from.
func (h *HFTokenizer) Path() string { return h.path }
