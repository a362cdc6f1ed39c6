package predict

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestStartLimit: vLLM refuses to start a model whose KV cache cannot
// hold one request of its whole context. Llama 3.1 8B's 131,072 tokens do
// not fit beside its weights on a 24 GB L4, so it starts only with a
// max_model_len of at most what the cache holds; on an H100 the whole
// context fits; SGLang's and TensorRT-LLM's rules cap a request instead,
// so they start either way.
func TestStartLimit(t *testing.T) {
	l4 := presetTarget(t, "l4/llama-3.1-8b")
	blocks, bt, err := l4.KVCapacity()
	if err != nil {
		t.Fatal(err)
	}
	if got := l4.StartLimit(); got != blocks*bt || got >= 131072 {
		t.Errorf("L4: start limit %d, want the cache's %d tokens (under 131,072)", got, blocks*bt)
	}
	if got := presetTarget(t, "h100-80gb/llama-3.1-8b").StartLimit(); got != 0 {
		t.Errorf("H100: start limit %d, want 0 (the whole context fits)", got)
	}
	for _, rules := range []string{"sglang", "trtllm"} {
		tg := presetTarget(t, "l4/llama-3.1-8b")
		tg.Models.Models[0].SchedulesAs = rules
		if got := tg.StartLimit(); got != 0 {
			t.Errorf("L4 under %s's rules: start limit %d, want 0", rules, got)
		}
	}
	if note := StartNote(l4); !strings.Contains(note, "--max-model-len "+results.Thousands(blocks*bt)+" or less") ||
		!strings.Contains(note, "131,072-token context") {
		t.Errorf("note %q", note)
	}
	p, err := l4.Prediction("", "", 1, "")
	if err != nil || p.MaxModelLen != blocks*bt {
		t.Errorf("the prediction records max_model_len %d (%v), want %d", p.MaxModelLen, err, blocks*bt)
	}
}
