package presets

import (
	"math"
	"testing"
)

func TestPresetsValidate(t *testing.T) {
	if err := ValidateAll(); err != nil {
		t.Fatal(err)
	}
}

// TestGemmaKV: 8 global layers × 8 KV heads × 256 × 2 (K, V) × 2 bytes =
// 65,536 bytes per token for the layers that keep every token.
func TestGemmaKV(t *testing.T) {
	m, _ := ModelNamed("gemma-12b-hybrid")
	if got := m.KVBytesPerToken(2); got != 65536 {
		t.Errorf("KV bytes per token = %v, want 65536", got)
	}
	l, _ := ModelNamed("llama-3.1-8b")
	if got := l.KVBytesPerToken(2); got != 131072 {
		t.Errorf("llama KV bytes per token = %v, want 131072", got)
	}
}

func TestBadPresetsAreRefused(t *testing.T) {
	if (Hardware{Name: "x"}).Validate() == nil || (Model{Name: "m", ParamsBillions: 1, Layers: 2, HiddenSize: 8, AttentionHeads: 1, KVHeads: 1, HeadDim: 8, SlidingWindow: 10, TensorParallel: 1, ContextLength: 10}).Validate() == nil {
		t.Error("an incomplete preset validated")
	}
	if (Sweep{Name: "s", Hardware: "l40s", Model: "llama-3.1-8b", Rates: []float64{2, 1}, SLOMillis: 300}).Validate() == nil {
		t.Error("decreasing rates validated")
	}
}

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"h100-80gb/llama-3.1-8b", "h100-80gbx1/llama-3.1-8b@bf16"},
		{"h100-80gbx2/llama-3.1-70b@fp8", "h100-80gbx2/llama-3.1-70b@fp8"},
		{"a100-80gb/llama-3.1-70b", "a100-80gbx4/llama-3.1-70b@bf16"},
		{"mi300xx8/llama-3.1-405b@fp8,kv=fp8", "mi300xx8/llama-3.1-405b@fp8,kv=fp8"},
		{"mi300x/qwen3-30b-a3b", "mi300xx1/qwen3-30b-a3b@bf16"},
		{"l40s+gemma-12b-hybrid@int4", "l40sx1/gemma-3-12b@int4"},
	} {
		s, err := ParseSpec(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if s.String() != tc.want {
			t.Errorf("%s reads as %s, want %s", tc.in, s, tc.want)
		}
	}
	for _, bad := range []string{"h100-80gb", "h100/llama-3.1-8b", "h100-80gbx0/llama-3.1-8b", "h100-80gb/llama-9",
		"h100-80gb/llama-3.1-8b@fp4", "h100-80gb/llama-3.1-8b@fp8,kv=int4", "h100-80gb/llama-3.1-8b@fp8,fp8"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

// TestMoEActive: Mixtral 46.7 − 45.1 + 45.1/4 = 12.875 B active;
// Qwen3-30B-A3B 30.5 − 28.99 + 28.99/16 = 3.321875 B.
func TestMoEActive(t *testing.T) {
	for name, want := range map[string]float64{"mixtral-8x7b": 12.875, "qwen3-30b-a3b": 3.321875, "llama-3.1-8b": 8.03} {
		m, _ := ModelNamed(name)
		if got := m.ActiveParamsBillions(); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s active = %v B, want %v", name, got, want)
		}
	}
}
