package sched

import "testing"

// Each figure below was written from the formula in the comment before the
// code computed it.

func TestAllReduceCost(t *testing.T) {
	// Llama 3.1 70B on 4 A100s over NVLink 3: hidden 8,192, 80 layers, so
	// 160 all-reduces a step. 8 tokens of bf16 activations make a
	// 131,072-byte message; a ring moves 2·3/4 of it: 196,608 bytes, which
	// take 0.65536 µs at 300 GB/s. With 10 µs per collective:
	// 160 × 10.65536 µs = 1.7048576 ms.
	hw := Hardware{HBMGiB: 80, BandwidthGBps: 2039, PeakTFLOPS: 312, InterconnectGBps: 300, InterconnectLatencyUs: 10}
	m := ModelShape{ParamsBillions: 70.6, BytesPerParameter: 2, Layers: 80, AttentionHeads: 64, HeadDim: 128, HiddenSize: 8192, TensorParallel: 4}
	c := NewCosts(hw, m, Tuning{ComputeEff: 1, MemoryEff: 1})
	if c.Collectives != 160 || c.CommBytesPerToken != 24576 {
		t.Fatalf("collectives %d, bytes per token %g; want 160 and 24,576", c.Collectives, c.CommBytesPerToken)
	}
	near(t, "8-token all-reduce ms", c.StepTime(Load{Tokens: 8, Seqs: 8}).Comm*1e3, 1.7048576, 1e-9)
	// An 8,192-token chunk: 201,326,592 bytes per collective, 671.08864 µs
	// at 300 GB/s, + 10 µs, × 160 = 108.9741824 ms.
	near(t, "8192-token all-reduce ms", c.StepTime(Load{Tokens: 8192, Seqs: 1}).Comm*1e3, 108.9741824, 1e-9)
	// One GPU pays none.
	m.TensorParallel = 1
	one := NewCosts(hw, m, Tuning{ComputeEff: 1, MemoryEff: 1})
	if got := one.StepTime(Load{Tokens: 8, Seqs: 8}).Comm; got != 0 {
		t.Errorf("TP 1 all-reduce time = %g, want 0", got)
	}
}

func TestEightBitPeak(t *testing.T) {
	// H100 SXM: 989 dense bf16 TFLOPS, 1,979 fp8. A W8A8 model computes
	// at the fp8 peak on every GPU of its TP group: 2 × 1,979e12.
	hw := Hardware{HBMGiB: 80, BandwidthGBps: 3350, PeakTFLOPS: 989, PeakTFLOPS8: 1979}
	m := ModelShape{ParamsBillions: 70.6, BytesPerParameter: 1, EightBitCompute: true, TensorParallel: 2}
	if got := NewCosts(hw, m, Tuning{ComputeEff: 1, MemoryEff: 1}).FLOPS; got != 2*1979e12 {
		t.Errorf("fp8 FLOPS = %g, want 3.958e15", got)
	}
	// Without fp8 tensor cores (A100) fp8 weights are dequantised into
	// bf16 products: the bf16 peak, but half the bytes to read.
	a100 := Hardware{HBMGiB: 80, BandwidthGBps: 2039, PeakTFLOPS: 312}
	c := NewCosts(a100, m, Tuning{ComputeEff: 1, MemoryEff: 1})
	if c.FLOPS != 2*312e12 || c.DenseBytes != 70.6e9 {
		t.Errorf("fp8 on A100: FLOPS %g, weight bytes %g; want 6.24e14 and 7.06e10", c.FLOPS, c.DenseBytes)
	}
}

// TestAttentionPeak: attention runs at the 16-bit peak beside fp8 weights
// and a bf16 KV cache (vLLM's W8A8: its attention kernels read bf16), and
// at the fp8 peak only when the KV cache is fp8 too: 1e15 attention
// FLOPs take 1e15 / 989e12 s, or 1e15 / 1,979e12 s.
func TestAttentionPeak(t *testing.T) {
	hw := Hardware{HBMGiB: 80, BandwidthGBps: 3350, PeakTFLOPS: 989, PeakTFLOPS8: 1979}
	for _, tc := range []struct {
		name        string
		eight, attn bool
		want        float64
	}{
		{"bf16 weights", false, false, 1e15 / 989e12},
		{"fp8 weights, bf16 KV", true, false, 1e15 / 989e12},
		{"fp8 weights, fp8 KV", true, true, 1e15 / 1979e12},
	} {
		m := ModelShape{ParamsBillions: 8, BytesPerParameter: 1, EightBitCompute: tc.eight, EightBitAttention: tc.attn, TensorParallel: 1}
		c := NewCosts(hw, m, Tuning{ComputeEff: 1, MemoryEff: 1})
		near(t, tc.name, c.StepTime(Load{AttnFLOPs: 1e15}).Compute, tc.want, 1e-12)
	}
}

func TestMixtureOfExperts(t *testing.T) {
	// Mixtral 8×7B: 46.7 B parameters, 45.1 B of them in 8 experts, top-2.
	// Active: 1.6 + 45.1 × 2/8 = 12.875 B.
	m := ModelShape{ParamsBillions: 46.7, BytesPerParameter: 2, ExpertParamsBillions: 45.1, Experts: 8, ExpertsPerToken: 2, TensorParallel: 1}
	c := NewCosts(Hardware{HBMGiB: 141, BandwidthGBps: 4800, PeakTFLOPS: 989}, m, Tuning{ComputeEff: 1, MemoryEff: 1})
	near(t, "active parameters", c.ActiveParams, 12.875e9, 1e-12)
	// One token touches its 2 experts; 8 tokens 8·(1 − 0.75⁸) = 7.19909668;
	// a 2,048-token chunk all 8.
	for _, tc := range []struct {
		tokens int
		want   float64
	}{{1, 2}, {8, 7.199096679688}, {2048, 8}} {
		near(t, "touched experts", c.TouchedExperts(tc.tokens), tc.want, 1e-9)
	}
	// A one-token decode step reads the dense 3.2 GB and 2/8 of the
	// 90.2 GB of experts: 25.75 GB over 4.8 TB/s = 5.364583 ms.
	near(t, "1-token MoE memory ms", c.StepTime(Load{Tokens: 1, Seqs: 1}).Memory*1e3, 5.3645833, 1e-6)
	// Compute per token is on the active parameters only.
	near(t, "1-token MoE compute µs", c.StepTime(Load{Tokens: 1, Seqs: 1}).Compute*1e6, 2*12.875e9/989e12*1e6, 1e-9)
}

func TestAttentionFLOPs(t *testing.T) {
	// Llama 3.1 8B: 32 layers × 32 query heads × 128: 4 × 4,096 × 32 =
	// 524,288 FLOPs per (query, key) pair. A 32-token prompt has
	// 1 + … + 32 = 528 pairs: 276,824,064 FLOPs; decoding token 100
	// attends to 100 keys: 52,428,800.
	c := NewCosts(Hardware{HBMGiB: 80, BandwidthGBps: 2039, PeakTFLOPS: 312},
		ModelShape{ParamsBillions: 8.03, BytesPerParameter: 2, Layers: 32, AttentionHeads: 32, HeadDim: 128, TensorParallel: 1},
		Tuning{ComputeEff: 1, MemoryEff: 1})
	if got := c.AttentionFLOPs(0, 32); got != 276824064 {
		t.Errorf("32-token prefill attention = %g, want 276,824,064", got)
	}
	if got := c.AttentionFLOPs(99, 1); got != 52428800 {
		t.Errorf("decode at 100 = %g, want 52,428,800", got)
	}
	// Chunking does not change the sum: 0–16 then 16–32.
	if got := c.AttentionFLOPs(0, 16) + c.AttentionFLOPs(16, 16); got != 276824064 {
		t.Errorf("chunked prefill attention = %g, want 276,824,064", got)
	}
}

func TestSlidingWindowSums(t *testing.T) {
	// Σ min(j, 4): j = 3..7 → 3+4+4+4+4 = 19; j = 6, 7 → 8; j = 1..3 → 6.
	for _, tc := range []struct {
		done, n, w int
		want       float64
	}{{2, 5, 4, 19}, {5, 2, 4, 8}, {0, 3, 4, 6}, {0, 3, 0, 6}, {4, 0, 4, 0}} {
		if got := sumCapped(tc.done, tc.n, tc.w); got != tc.want {
			t.Errorf("sumCapped(%d, %d, %d) = %g, want %g", tc.done, tc.n, tc.w, got, tc.want)
		}
	}
}

func TestOverheadsScaleWithBatch(t *testing.T) {
	// 2 ms a step and 20 µs a sequence: 8 sequences cost 2.16 ms, 256
	// cost 7.12 ms on top of the roofline.
	c := NewCosts(Hardware{HBMGiB: 80, BandwidthGBps: 2039, PeakTFLOPS: 312},
		ModelShape{ParamsBillions: 8.03, BytesPerParameter: 2, TensorParallel: 1},
		Tuning{ComputeEff: 1, MemoryEff: 1, StepOverhead: 2e-3, SeqOverhead: 20e-6})
	near(t, "8-seq overhead ms", c.StepTime(Load{Tokens: 8, Seqs: 8}).Overhead*1e3, 2.16, 1e-12)
	near(t, "256-seq overhead ms", c.StepTime(Load{Tokens: 256, Seqs: 256}).Overhead*1e3, 7.12, 1e-12)
}

func TestActivationReserve(t *testing.T) {
	// The base case less a 2 GiB reserve: (80 × 0.9 − 2) GiB is
	// 75,161,927,680 bytes, less 13.48 GB of weights 61,681,927,680, over
	// 8,388,608 bytes a block: 7,353.0.
	if got := KVBlocks(baseHW, baseModel, 0.9, 2, 16); got != 7353 {
		t.Errorf("KVBlocks with a 2 GiB reserve = %d, want 7353", got)
	}
}
