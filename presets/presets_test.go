package presets

import "testing"

func TestPresetsValidate(t *testing.T) {
	if err := ValidateAll(); err != nil {
		t.Fatal(err)
	}
}

// TestGemmaKV: 8 global layers × 8 KV heads × 256 × 2 (K, V) × 2 bytes =
// 65,536 bytes per token for the layers that keep every token.
func TestGemmaKV(t *testing.T) {
	m, _ := ModelNamed("gemma-12b-hybrid")
	if got := m.KVBytesPerToken(); got != 65536 {
		t.Errorf("KV bytes per token = %v, want 65536", got)
	}
	l, _ := ModelNamed("llama-3.1-8b")
	if got := l.KVBytesPerToken(); got != 131072 {
		t.Errorf("llama KV bytes per token = %v, want 131072", got)
	}
}

func TestBadPresetsAreRefused(t *testing.T) {
	if (Hardware{Name: "x"}).Validate() == nil || (Model{Name: "m", ParamsBillions: 1, BytesPerParameter: 2, Layers: 2, KVHeads: 1, HeadDim: 8, SlidingWindow: 10, TensorParallel: 1, ContextLength: 10}).Validate() == nil {
		t.Error("an incomplete preset validated")
	}
	if (Sweep{Name: "s", Hardware: "l40s", Model: "llama-3.1-8b", Rates: []float64{2, 1}, SLOMillis: 300}).Validate() == nil {
		t.Error("decreasing rates validated")
	}
}
