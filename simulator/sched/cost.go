package sched

import "math"

// Hardware describes one GPU.
type Hardware struct {
	HBMGiB        float64
	BandwidthGBps float64
	// PeakTFLOPS is dense 16-bit tensor throughput; PeakTFLOPS8 the dense
	// 8-bit (fp8) figure, 0 where the GPU has no fp8 tensor cores.
	PeakTFLOPS  float64
	PeakTFLOPS8 float64
	// InterconnectGBps is one GPU's bandwidth to its tensor-parallel peers
	// in one direction, and InterconnectLatencyUs the fixed cost of one
	// small all-reduce over it.
	InterconnectGBps      float64
	InterconnectLatencyUs float64
	// GEMM, when set, slows the matrix products of steps smaller than a
	// large prefill, and of each GPU's narrower slice under tensor
	// parallelism, by their shape (GEMMTiles); nil: one efficiency for
	// every product.
	GEMM *GEMMTiles
}

// ModelShape is what the cost model and the KV capacity need of a model.
// The architecture fields (Layers, AttentionHeads, HeadDim, HiddenSize) may
// be zero; the attention and all-reduce terms are then left out.
type ModelShape struct {
	// ParamsBillions counts every parameter, experts included: it sizes
	// the weights in memory.
	ParamsBillions    float64
	BytesPerParameter float64
	// Mixture of experts: ExpertParamsBillions is the part of
	// ParamsBillions held in the Experts routed experts (all layers), of
	// which each token uses ExpertsPerToken.
	ExpertParamsBillions float64
	Experts              int
	ExpertsPerToken      int
	// EightBitCompute marks fp8 weights and activations (W8A8): matrix
	// products run at PeakTFLOPS8. EightBitAttention marks attention run
	// on 8-bit operands too (an fp8 KV cache read by fp8 kernels, as
	// TensorRT-LLM's fp8 context FMHA); otherwise attention runs at the
	// 16-bit peak whatever the weights.
	EightBitCompute   bool
	EightBitAttention bool

	Layers         int
	AttentionHeads int
	KVHeads        int
	HeadDim        int
	HiddenSize     int
	// GlobalLayers is how many layers attend to every token when Window is
	// set; the other Layers − GlobalLayers see at most Window tokens.
	GlobalLayers int

	// KV bytes per token of the full-attention layers.
	GlobalKVBytesPerToken float64
	// KV bytes per token of the sliding-window layers, which hold at most
	// Window tokens each.
	LocalKVBytesPerToken float64
	Window               int
	TensorParallel       int
	// VocabSize and TiedEmbeddings, when the vocabulary is known, charge
	// the embedding table and the LM head as engines run them (vocab.go);
	// 0 leaves them among the products of every token.
	VocabSize      int
	TiedEmbeddings bool
}

// Tuning holds the free parameters of the cost model: the fractions of
// peak compute and bandwidth a real engine reaches, and its overheads.
// These are what knee calibrate fits.
type Tuning struct {
	ComputeEff float64
	MemoryEff  float64
	// StepOverhead is paid once per step (scheduling, input preparation,
	// kernel launches), SeqOverhead once per scheduled sequence (sampling,
	// detokenising, output processing), both in seconds.
	StepOverhead float64
	SeqOverhead  float64
	// ScheduleOverhead is paid once per call of the scheduler: every
	// step, or once a multi-step window, whose later steps run on the
	// batch already prepared (what vLLM V0's --num-scheduler-steps
	// saves). 0 unless a model gives it: no public source gives the
	// figure for a version an engine profile imitates.
	ScheduleOverhead float64
}

// Costs are the roofline parameters of a model on its GPUs.
type Costs struct {
	// ActiveParams are the parameters one token multiplies through
	// (shared plus ExpertsPerToken experts); DenseBytes the weights every
	// step reads whatever the batch, ExpertBytes those of all experts.
	ActiveParams float64
	DenseBytes   float64
	ExpertBytes  float64
	Experts      int
	PerToken     int
	FLOPS        float64 // peak of the compute dtype, all GPUs
	// AttnFLOPS is attention's peak, all GPUs: the 16-bit one unless
	// ModelShape.EightBitAttention.
	AttnFLOPS float64
	Bandwidth float64 // bytes/s, all GPUs
	Tuning
	// Attention FLOPs per query token per context token, for the layers
	// that see every token and for the sliding-window ones.
	AttnGlobal, AttnLocal float64
	// Tensor-parallel all-reduces: Collectives per step, each costing
	// CollectiveLatency plus CommBytesPerToken × tokens over CommBandwidth.
	Collectives       int
	CollectiveLatency float64
	CommBytesPerToken float64
	CommBandwidth     float64

	GlobalKV float64
	LocalKV  float64
	Window   int
	// gemm is the products' shape term (Hardware.GEMM); nil: none.
	gemm *gemmShape
	// vocab is the embedding's and LM head's term; nil: none.
	vocab *vocabTerm
}

// NewCosts derives the cost parameters. Tensor parallelism multiplies
// bandwidth and FLOPS (the weights are split across the GPUs and each
// reads its share) but adds two all-reduces per layer of the activations
// of every scheduled token (Megatron-style: after attention and after the
// MLP). A ring all-reduce moves 2·(TP−1)/TP of the message through every
// GPU's link.
func NewCosts(hw Hardware, m ModelShape, t Tuning) Costs {
	tp := max(m.TensorParallel, 1)
	peak := hw.PeakTFLOPS
	if m.EightBitCompute && hw.PeakTFLOPS8 > 0 {
		peak = hw.PeakTFLOPS8
	}
	expert := m.ExpertParamsBillions * 1e9
	if m.Experts == 0 {
		expert = 0
	}
	total := m.ParamsBillions * 1e9
	active := total
	if expert > 0 {
		active = total - expert + expert*float64(m.ExpertsPerToken)/float64(m.Experts)
	}
	c := Costs{
		ActiveParams: active,
		DenseBytes:   (total - expert) * m.BytesPerParameter,
		ExpertBytes:  expert * m.BytesPerParameter,
		Experts:      m.Experts,
		PerToken:     m.ExpertsPerToken,
		FLOPS:        peak * 1e12 * float64(tp),
		AttnFLOPS:    hw.PeakTFLOPS * 1e12 * float64(tp),
		Bandwidth:    hw.BandwidthGBps * 1e9 * float64(tp),
		Tuning:       t,
		GlobalKV:     m.GlobalKVBytesPerToken,
		LocalKV:      m.LocalKVBytesPerToken,
		Window:       m.Window,
	}
	if m.EightBitAttention && m.EightBitCompute {
		c.AttnFLOPS = c.FLOPS
	}
	c.gemm = newGEMMShape(hw.GEMM, m, active)
	c.vocab = newVocabTerm(m, active)
	perPair := 4 * float64(m.AttentionHeads*m.HeadDim) // QKᵀ and AV, 2 FLOPs per multiply-add
	global := m.Layers
	if m.Window > 0 {
		global = m.GlobalLayers
	}
	c.AttnGlobal = perPair * float64(global)
	c.AttnLocal = perPair * float64(m.Layers-global)
	if tp > 1 && m.HiddenSize > 0 && hw.InterconnectGBps > 0 {
		const activationBytes = 2 // bf16 activations, whatever the weights
		c.Collectives = 2 * m.Layers
		c.CollectiveLatency = hw.InterconnectLatencyUs * 1e-6
		c.CommBytesPerToken = 2 * float64(tp-1) / float64(tp) * float64(m.HiddenSize) * activationBytes
		c.CommBandwidth = hw.InterconnectGBps * 1e9
	}
	return c
}

// KVBytes is the KV footprint of a sequence of n tokens: full-attention
// layers hold all n, sliding-window layers at most Window.
func (c *Costs) KVBytes(n int) float64 {
	local := n
	if c.Window > 0 && local > c.Window {
		local = c.Window
	}
	return c.GlobalKV*float64(n) + c.LocalKV*float64(local)
}

// AttentionFLOPs is the attention work of computing n tokens of a sequence
// whose first done tokens are already computed: query token j (1-based
// over the whole sequence) attends to j tokens causally, or to at most
// Window of them in a sliding-window layer.
func (c *Costs) AttentionFLOPs(done, n int) float64 {
	if n <= 0 || c.AttnGlobal == 0 && c.AttnLocal == 0 {
		return 0
	}
	f := c.AttnGlobal * sumCapped(done, n, 0)
	if c.AttnLocal > 0 {
		f += c.AttnLocal * sumCapped(done, n, c.Window)
	}
	return f
}

// sumCapped is Σ min(j, w) for j in (done, done+n]; w = 0 means no cap.
func sumCapped(done, n, w int) float64 {
	a, b := float64(done), float64(done+n)
	if w <= 0 || done+n <= w {
		return triangle(b) - triangle(a)
	}
	W := float64(w)
	if done >= w {
		return W * float64(n)
	}
	return triangle(W) - triangle(a) + W*(b-W)
}

// triangle is 1 + 2 + … + x.
func triangle(x float64) float64 { return x * (x + 1) / 2 }

// TouchedExperts is the expected number of distinct experts (per layer)
// that a step of tokens routes to, each token choosing PerToken of Experts
// uniformly: an expert is missed by one token with probability
// (E−k)/E, so by all of them with ((E−k)/E)^tokens.
func (c *Costs) TouchedExperts(tokens int) float64 {
	if c.Experts == 0 || tokens <= 0 {
		return 0
	}
	e := float64(c.Experts)
	return e * (1 - math.Pow((e-float64(c.PerToken))/e, float64(tokens)))
}

// Load is what one step schedules: tokens, sequences, the KV they read
// and their attention work.
type Load struct {
	Tokens    int
	Seqs      int
	KVBytes   float64
	AttnFLOPs float64
	// EncoderFLOPs is the vision encoder's work in the step.
	EncoderFLOPs float64
	// AdapterFLOPs and AdapterBytes are the step's LoRA adapters' work
	// and weights read; LoadSeconds is the adapters loaded before it.
	AdapterFLOPs, AdapterBytes, LoadSeconds float64
	// InWindow says the step runs inside a multi-step window: no
	// scheduler call before it (Tuning.ScheduleOverhead).
	InWindow bool
}

// StepCost is the time of one step and its parts, in seconds.
type StepCost struct {
	Duration float64
	Compute  float64
	Memory   float64
	Comm     float64
	Overhead float64
}

// StepTime is the time of one engine step: the slower of compute (2 FLOPs
// per active parameter per scheduled token, the embedding and LM head as
// engines run them where the vocabulary is known (vocab.go), plus
// attention) and memory (the dense weights once, the experts the step
// touches, and the KV of every scheduled sequence), then the
// tensor-parallel all-reduces, which wait for the layer before them, and
// the overheads.
func (c *Costs) StepTime(l Load) StepCost {
	var s StepCost
	dense := c.denseFLOPs(l)
	if c.gemm != nil {
		dense /= c.gemm.relative(l.Tokens)
	}
	work := dense + l.EncoderFLOPs + l.AdapterFLOPs
	if attn := c.attnFLOPS(); attn == c.FLOPS {
		// One sum, as before attention had its own peak: the same bits.
		s.Compute = (work + l.AttnFLOPs) / (c.FLOPS * c.ComputeEff)
	} else {
		s.Compute = work/(c.FLOPS*c.ComputeEff) + l.AttnFLOPs/(attn*c.ComputeEff)
	}
	weights := c.DenseBytes - c.unreadBytes()
	if c.Experts > 0 {
		weights += c.ExpertBytes * c.TouchedExperts(l.Tokens) / float64(c.Experts)
	}
	s.Memory = (weights + l.KVBytes + l.AdapterBytes) / (c.Bandwidth * c.MemoryEff)
	if c.Collectives > 0 && l.Tokens > 0 {
		s.Comm = float64(c.Collectives) * (c.CollectiveLatency + c.CommBytesPerToken*float64(l.Tokens)/c.CommBandwidth)
	}
	s.Overhead = c.StepOverhead + c.SeqOverhead*float64(l.Seqs)
	if !l.InWindow {
		s.Overhead += c.ScheduleOverhead
	}
	s.Duration = math.Max(s.Compute, s.Memory) + s.Comm + s.Overhead + l.LoadSeconds
	return s
}

// KVBlocks is the number of KV-cache blocks that fit: the GPU memory the
// engine may use, less the weights and a reserve for activations and
// graphs (reserveGiB per GPU), over the bytes of one block of the
// full-attention layers (per GPU, as the weights and the KV are both split
// across tensor-parallel GPUs).
func KVBlocks(hw Hardware, m ModelShape, gpuMemoryUtilization, reserveGiB float64, blockSize int) int {
	tp := float64(max(m.TensorParallel, 1))
	free := hw.HBMGiB*(1<<30)*gpuMemoryUtilization - m.ParamsBillions*1e9*m.BytesPerParameter/tp - reserveGiB*(1<<30)
	perBlock := m.GlobalKVBytesPerToken / tp * float64(blockSize)
	if m.GlobalKVBytesPerToken == 0 {
		perBlock = m.LocalKVBytesPerToken / tp * float64(blockSize)
	}
	if free <= 0 || perBlock <= 0 {
		return 0
	}
	return int(math.Floor(free / perBlock))
}

// windowBlocks is how many pool blocks a sequence of n tokens needs for its
// sliding-window layers, counted in blocks of the full-attention layers'
// size. Those blocks are never prefix-cached.
func (c *Costs) windowBlocks(n, blockSize int) int {
	if c.LocalKV == 0 || c.GlobalKV == 0 {
		return 0
	}
	local := n
	if c.Window > 0 && local > c.Window {
		local = c.Window
	}
	return int(math.Ceil(c.LocalKV * float64(local) / (c.GlobalKV * float64(blockSize))))
}

// attnFLOPS is attention's peak; costs built before it was set (a zero)
// take the matrix products'.
func (c *Costs) attnFLOPS() float64 {
	if c.AttnFLOPS > 0 {
		return c.AttnFLOPS
	}
	return c.FLOPS
}
