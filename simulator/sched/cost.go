package sched

import "math"

// Hardware describes one GPU.
type Hardware struct {
	HBMGiB        float64
	BandwidthGBps float64
	PeakTFLOPS    float64
}

// ModelShape is what the cost model and the KV capacity need of a model.
type ModelShape struct {
	ParamsBillions    float64
	BytesPerParameter float64
	// KV bytes per token of the full-attention layers.
	GlobalKVBytesPerToken float64
	// KV bytes per token of the sliding-window layers, which hold at most
	// Window tokens each.
	LocalKVBytesPerToken float64
	Window               int
	TensorParallel       int
}

// Costs are the roofline parameters of a model on its GPUs.
type Costs struct {
	Params      float64 // parameters
	WeightBytes float64
	FLOPS       float64 // peak, all GPUs
	Bandwidth   float64 // bytes/s, all GPUs
	ComputeEff  float64
	MemoryEff   float64
	Overhead    float64 // seconds per step
	GlobalKV    float64
	LocalKV     float64
	Window      int
}

// NewCosts derives the cost parameters. Tensor parallelism multiplies
// bandwidth and FLOPS; the weights are split across the GPUs but all of
// them are still read once per step, so the weight read time falls by the
// same factor.
func NewCosts(hw Hardware, m ModelShape, computeEff, memoryEff, overheadS float64) Costs {
	tp := float64(max(m.TensorParallel, 1))
	return Costs{
		Params:      m.ParamsBillions * 1e9,
		WeightBytes: m.ParamsBillions * 1e9 * m.BytesPerParameter,
		FLOPS:       hw.PeakTFLOPS * 1e12 * tp,
		Bandwidth:   hw.BandwidthGBps * 1e9 * tp,
		ComputeEff:  computeEff,
		MemoryEff:   memoryEff,
		Overhead:    overheadS,
		GlobalKV:    m.GlobalKVBytesPerToken,
		LocalKV:     m.LocalKVBytesPerToken,
		Window:      m.Window,
	}
}

// KVBytes is the KV footprint of a sequence of n tokens: full-attention
// layers hold all n, sliding-window layers at most Window.
func (c Costs) KVBytes(n int) float64 {
	local := n
	if c.Window > 0 && local > c.Window {
		local = c.Window
	}
	return c.GlobalKV*float64(n) + c.LocalKV*float64(local)
}

// StepTime is the roofline time of one engine step: the slower of compute
// (2 FLOPs per parameter per scheduled token) and memory (the weights once,
// plus the KV of every scheduled sequence), plus a fixed overhead.
func (c Costs) StepTime(tokens int, kvBytes float64) (duration, compute, memory float64) {
	compute = 2 * c.Params * float64(tokens) / (c.FLOPS * c.ComputeEff)
	memory = (c.WeightBytes + kvBytes) / (c.Bandwidth * c.MemoryEff)
	return math.Max(compute, memory) + c.Overhead, compute, memory
}

// KVBlocks is the number of KV-cache blocks that fit: the GPU memory the
// engine may use, less the weights, over the bytes of one block of the
// full-attention layers (per GPU, as the weights and the KV are both split
// across tensor-parallel GPUs).
func KVBlocks(hw Hardware, m ModelShape, gpuMemoryUtilization float64, blockSize int) int {
	tp := float64(max(m.TensorParallel, 1))
	free := hw.HBMGiB*(1<<30)*gpuMemoryUtilization - m.ParamsBillions*1e9*m.BytesPerParameter/tp
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
func (c Costs) windowBlocks(n, blockSize int) int {
	if c.LocalKV == 0 || c.GlobalKV == 0 {
		return 0
	}
	local := n
	if c.Window > 0 && local > c.Window {
		local = c.Window
	}
	return int(math.Ceil(c.LocalKV * float64(local) / (c.GlobalKV * float64(blockSize))))
}
