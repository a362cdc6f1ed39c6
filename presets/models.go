package presets

// Model is the shape of a model from its published config: what its
// weights, KV cache, attention and all-reduces cost.
type Model struct {
	Name string
	// Aliases are older names still accepted.
	Aliases []string
	// ParamsBillions counts every parameter, experts included.
	ParamsBillions float64
	Layers         int
	HiddenSize     int
	AttentionHeads int
	KVHeads        int
	HeadDim        int
	// SlidingWindow > 0 marks hybrid attention: only GlobalLayers hold
	// every token, the others at most SlidingWindow.
	SlidingWindow int
	GlobalLayers  int
	// Mixture of experts: Experts routed experts per layer, of which a
	// token uses ExpertsPerToken; ExpertParamsBillions is their total
	// over all layers (3 × hidden × expert intermediate size each).
	Experts              int
	ExpertsPerToken      int
	ExpertParamsBillions float64
	// TensorParallel is the GPU count a preset uses unless asked for
	// another (GPUxN).
	TensorParallel int
	ContextLength  int
	// VocabSize and TiedEmbeddings are the config's vocab_size and
	// tie_word_embeddings: the embedding table (looked up, not
	// multiplied) and the LM head (multiplied only for the positions
	// that are sampled), both in ParamsBillions.
	VocabSize      int
	TiedEmbeddings bool
	Source         string
}

// KVBytesPerToken is the full-attention KV footprint per token (K and V)
// of the layers that hold every token, at bytesPerElement.
func (m Model) KVBytesPerToken(bytesPerElement float64) float64 {
	layers := m.Layers
	if m.SlidingWindow > 0 {
		layers = m.GlobalLayers
	}
	return 2 * float64(layers*m.KVHeads*m.HeadDim) * bytesPerElement
}

// ActiveParamsBillions is what one token multiplies through: everything
// but the experts, plus ExpertsPerToken of them.
func (m Model) ActiveParamsBillions() float64 {
	if m.Experts == 0 {
		return m.ParamsBillions
	}
	return m.ParamsBillions - m.ExpertParamsBillions + m.ExpertParamsBillions*float64(m.ExpertsPerToken)/float64(m.Experts)
}

// Shapes from each model's config.json on Hugging Face. Expert parameters
// are layers × experts × 3 × hidden_size × (moe_)intermediate_size.
var models = []Model{
	// 32 layers, hidden 4,096, 32 heads, 8 KV heads of 128; 8.03 B.
	{Name: "llama-3.1-8b", ParamsBillions: 8.03, Layers: 32, HiddenSize: 4096, AttentionHeads: 32, KVHeads: 8, HeadDim: 128,
		TensorParallel: 1, ContextLength: 131072, VocabSize: 128256, Source: "meta-llama/Llama-3.1-8B config"},
	// 80 layers, hidden 8,192, 64 heads, 8 KV heads of 128; 70.6 B.
	{Name: "llama-3.1-70b", ParamsBillions: 70.6, Layers: 80, HiddenSize: 8192, AttentionHeads: 64, KVHeads: 8, HeadDim: 128,
		TensorParallel: 4, ContextLength: 131072, VocabSize: 128256, Source: "meta-llama/Llama-3.1-70B config"},
	// Same shape as 3.1 70B.
	{Name: "llama-3.3-70b", ParamsBillions: 70.6, Layers: 80, HiddenSize: 8192, AttentionHeads: 64, KVHeads: 8, HeadDim: 128,
		TensorParallel: 4, ContextLength: 131072, VocabSize: 128256, Source: "meta-llama/Llama-3.3-70B-Instruct config"},
	// 126 layers, hidden 16,384, 128 heads, 8 KV heads of 128; 405.9 B.
	{Name: "llama-3.1-405b", ParamsBillions: 405.9, Layers: 126, HiddenSize: 16384, AttentionHeads: 128, KVHeads: 8, HeadDim: 128,
		TensorParallel: 8, ContextLength: 131072, VocabSize: 128256, Source: "meta-llama/Llama-3.1-405B config"},
	// 32 layers, hidden 4,096, 32 heads, 8 KV heads; 8 experts of
	// intermediate 14,336, top 2: 32 × 8 × 3 × 4,096 × 14,336 = 45.1 B of 46.7 B.
	{Name: "mixtral-8x7b", ParamsBillions: 46.7, Layers: 32, HiddenSize: 4096, AttentionHeads: 32, KVHeads: 8, HeadDim: 128,
		Experts: 8, ExpertsPerToken: 2, ExpertParamsBillions: 45.1,
		TensorParallel: 2, ContextLength: 32768, VocabSize: 32000, Source: "mistralai/Mixtral-8x7B-v0.1 config"},
	// 28 layers, hidden 3,584, 28 heads, 4 KV heads of 128; 7.62 B.
	{Name: "qwen2.5-7b", ParamsBillions: 7.62, Layers: 28, HiddenSize: 3584, AttentionHeads: 28, KVHeads: 4, HeadDim: 128,
		TensorParallel: 1, ContextLength: 32768, VocabSize: 152064, Source: "Qwen/Qwen2.5-7B config"},
	// 80 layers, hidden 8,192, 64 heads, 8 KV heads of 128; 72.7 B.
	{Name: "qwen2.5-72b", ParamsBillions: 72.7, Layers: 80, HiddenSize: 8192, AttentionHeads: 64, KVHeads: 8, HeadDim: 128,
		TensorParallel: 4, ContextLength: 32768, VocabSize: 152064, Source: "Qwen/Qwen2.5-72B config"},
	// 36 layers, hidden 4,096, 32 heads, 8 KV heads of 128; 8.19 B.
	{Name: "qwen3-8b", ParamsBillions: 8.19, Layers: 36, HiddenSize: 4096, AttentionHeads: 32, KVHeads: 8, HeadDim: 128,
		TensorParallel: 1, ContextLength: 40960, VocabSize: 151936, Source: "Qwen/Qwen3-8B config"},
	// 40 layers, hidden 5,120, 40 heads, 8 KV heads of 128; 14.8 B.
	{Name: "qwen3-14b", ParamsBillions: 14.8, Layers: 40, HiddenSize: 5120, AttentionHeads: 40, KVHeads: 8, HeadDim: 128,
		TensorParallel: 1, ContextLength: 40960, VocabSize: 151936, Source: "Qwen/Qwen3-14B config"},
	// 64 layers, hidden 5,120, 64 heads, 8 KV heads of 128; 32.8 B.
	{Name: "qwen3-32b", ParamsBillions: 32.8, Layers: 64, HiddenSize: 5120, AttentionHeads: 64, KVHeads: 8, HeadDim: 128,
		TensorParallel: 2, ContextLength: 40960, VocabSize: 151936, Source: "Qwen/Qwen3-32B config"},
	// 48 layers, hidden 2,048, 32 heads, 4 KV heads of 128; 128 experts of
	// 768, top 8: 48 × 128 × 3 × 2,048 × 768 = 29.0 B of 30.5 B (3.3 B active).
	{Name: "qwen3-30b-a3b", ParamsBillions: 30.5, Layers: 48, HiddenSize: 2048, AttentionHeads: 32, KVHeads: 4, HeadDim: 128,
		Experts: 128, ExpertsPerToken: 8, ExpertParamsBillions: 28.99,
		TensorParallel: 1, ContextLength: 40960, VocabSize: 151936, Source: "Qwen/Qwen3-30B-A3B config"},
	// 94 layers, hidden 4,096, 64 heads, 4 KV heads of 128; 128 experts of
	// 1,536, top 8: 94 × 128 × 3 × 4,096 × 1,536 = 227.1 B of 235.1 B (22 B active).
	{Name: "qwen3-235b-a22b", ParamsBillions: 235.1, Layers: 94, HiddenSize: 4096, AttentionHeads: 64, KVHeads: 4, HeadDim: 128,
		Experts: 128, ExpertsPerToken: 8, ExpertParamsBillions: 227.1,
		TensorParallel: 8, ContextLength: 40960, VocabSize: 151936, Source: "Qwen/Qwen3-235B-A22B config"},
	// Gemma 3 12B: 48 layers, hidden 3,840, 16 heads, 8 KV heads of 256;
	// five sliding-window (1,024) layers to one global: 8 global.
	{Name: "gemma-3-12b", Aliases: []string{"gemma-12b-hybrid"}, ParamsBillions: 12.2, Layers: 48, HiddenSize: 3840, AttentionHeads: 16, KVHeads: 8, HeadDim: 256,
		SlidingWindow: 1024, GlobalLayers: 8, TensorParallel: 1, ContextLength: 131072, VocabSize: 262208, TiedEmbeddings: true, Source: "google/gemma-3-12b-it config"},
	// Gemma 3 27B: 62 layers, hidden 5,376, 32 heads, 16 KV heads of 128;
	// every sixth layer global: 10.
	{Name: "gemma-3-27b", ParamsBillions: 27.4, Layers: 62, HiddenSize: 5376, AttentionHeads: 32, KVHeads: 16, HeadDim: 128,
		SlidingWindow: 1024, GlobalLayers: 10, TensorParallel: 1, ContextLength: 131072, VocabSize: 262208, TiedEmbeddings: true, Source: "google/gemma-3-27b-it config"},
}

// DType is a number format for weights or the KV cache.
type DType struct {
	Name  string
	Bytes float64
	// EightBitCompute: weights and activations both 8-bit (W8A8), so the
	// matrix products run on fp8 tensor cores where the GPU has them.
	EightBitCompute bool
}

// The formats a preset can be asked for. int8 and int4 are weight-only
// (W8A16, AWQ/GPTQ W4A16): products still run in bf16; int4's group
// scales (about 2 bytes per 128 weights) are not counted.
var dtypes = []DType{
	{Name: "bf16", Bytes: 2}, {Name: "fp16", Bytes: 2},
	{Name: "fp8", Bytes: 1, EightBitCompute: true},
	{Name: "int8", Bytes: 1}, {Name: "int4", Bytes: 0.5},
}

// DTypeNamed looks a number format up by name.
func DTypeNamed(name string) (DType, bool) {
	return find(dtypes, name, func(d DType) string { return d.Name })
}
