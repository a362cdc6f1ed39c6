package sched

import (
	"math"
	"testing"
)

// hopperTiles are presets' hopper figures (presets.GEMMFitFor), repeated
// here because sched imports no presets.
var hopperTiles = &GEMMTiles{SMs: 132, TileRows: 64, TileCols: 128, TileEff: 0.94, KernelUs: 5, KPad: 256}

func llama70B(tp int) ModelShape {
	return ModelShape{ParamsBillions: 70.6, BytesPerParameter: 2, Layers: 80, AttentionHeads: 64, KVHeads: 8,
		HeadDim: 128, HiddenSize: 8192, GlobalKVBytesPerToken: 327680, TensorParallel: tp}
}

// TestGEMMShapeSlowsSmallSteps: a large prefill step keeps the tuning's
// efficiency; smaller steps reach less of it, a narrower slice per GPU
// less again at the same tokens, and below the tables' smallest products
// the term holds still (the memory term governs there).
func TestGEMMShapeSlowsSmallSteps(t *testing.T) {
	one := newGEMMShape(hopperTiles, llama70B(1), 70.6e9)
	eight := newGEMMShape(hopperTiles, llama70B(8), 70.6e9)
	prev := 0.0
	for _, m := range []int{256, 512, 1024, 2048, 4096} {
		r1, r8 := one.relative(m), eight.relative(m)
		t.Logf("%5d tokens: TP1 %.3f  TP8 %.3f", m, r1, r8)
		if r1 < prev || r1 > 1 || r8 > r1+1e-9 {
			t.Errorf("%d tokens: TP1 %.3f (before %.3f), TP8 %.3f", m, r1, prev, r8)
		}
		prev = r1
	}
	if one.relative(4096) != 1 || one.relative(1<<16) != 1 || one.relative(1) != one.relative(256) || eight.relative(1<<16) >= 1 {
		t.Errorf("reference %v, large %v (TP8 %v), one token %v against 256's %v",
			one.relative(4096), one.relative(1<<16), eight.relative(1<<16), one.relative(1), one.relative(256))
	}
	if r := one.relative(256); !(r > 0.5 && r < 0.95) {
		t.Errorf("256 tokens at %.3f of a large step's speed: want a visible but bounded loss", r)
	}
}

// TestGEMMShapeOnlyWhereAsked: no tiles, or a model without the shape the
// term needs (no architecture, or experts), leaves every step as it was.
func TestGEMMShapeOnlyWhereAsked(t *testing.T) {
	hw := Hardware{HBMGiB: 80, BandwidthGBps: 3350, PeakTFLOPS: 989}
	tu := Tuning{ComputeEff: 0.5, MemoryEff: 0.8}
	plain := NewCosts(hw, llama70B(4), tu)
	hw.GEMM = hopperTiles
	shaped := NewCosts(hw, llama70B(4), tu)
	moe := llama70B(4)
	moe.Experts, moe.ExpertsPerToken, moe.ExpertParamsBillions = 8, 2, 40
	bare := llama70B(4)
	bare.HiddenSize = 0
	for _, m := range []ModelShape{moe, bare} {
		if c := NewCosts(hw, m, tu); c.gemm != nil {
			t.Errorf("%+v: a shape term without the shape", m)
		}
	}
	for _, tokens := range []int{512, 4096} {
		a, b := plain.StepTime(Load{Tokens: tokens, Seqs: 1}), shaped.StepTime(Load{Tokens: tokens, Seqs: 1})
		want := a.Compute / shaped.gemm.relative(tokens)
		if math.Abs(b.Compute-want) > 1e-12 || tokens == 4096 && b.Compute <= a.Compute {
			t.Errorf("%d tokens: compute %.6f shaped, %.6f plain (want %.6f)", tokens, b.Compute, a.Compute, want)
		}
	}
}

// TestGEMMShapeNeverInfinite: a model thinner than its tensor-parallel
// group, or tiles no step can fill, leave the term out rather than divide
// a step's work by nothing.
func TestGEMMShapeNeverInfinite(t *testing.T) {
	tiny := ModelShape{ParamsBillions: 1e-6, BytesPerParameter: 2, Layers: 1, AttentionHeads: 1, KVHeads: 1,
		HeadDim: 1, HiddenSize: 2, TensorParallel: 64}
	hw := Hardware{HBMGiB: 80, BandwidthGBps: 3350, PeakTFLOPS: 989, GEMM: hopperTiles}
	for _, m := range []ModelShape{tiny, llama70B(1 << 20)} {
		c := NewCosts(hw, m, Tuning{ComputeEff: 0.5, MemoryEff: 0.8})
		for _, tokens := range []int{0, 1, 300, 1 << 20} {
			if s := c.StepTime(Load{Tokens: tokens, Seqs: 1}); math.IsNaN(s.Duration) || math.IsInf(s.Duration, 0) {
				t.Fatalf("TP %d, %d tokens: step %v", m.TensorParallel, tokens, s.Duration)
			}
		}
	}
}
