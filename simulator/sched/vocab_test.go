package sched

import (
	"math"
	"testing"
)

// TestVocabTermFLOPs: with the vocabulary known, a step multiplies every
// token through the body and every sequence through the LM head, and
// streams all the weights but an untied embedding table: Llama 3.1 8B's
// figures by hand.
func TestVocabTermFLOPs(t *testing.T) {
	const params, table = 8.03e9, 128256 * 4096.0
	shape := ModelShape{ParamsBillions: 8.03, BytesPerParameter: 2, HiddenSize: 4096, AttentionHeads: 32, Layers: 32,
		HeadDim: 128, KVHeads: 8, TensorParallel: 1, VocabSize: 128256}
	hw := Hardware{PeakTFLOPS: 1000, BandwidthGBps: 1000}
	for _, tc := range []struct {
		name        string
		tied        bool
		load        Load
		flops, read float64
	}{
		{"untied prompt", false, Load{Tokens: 4096, Seqs: 1}, 2*(params-2*table)*4096 + 2*table, (params - table) * 2},
		{"untied decode", false, Load{Tokens: 64, Seqs: 64}, 2 * (params - table) * 64, (params - table) * 2},
		{"tied prompt", true, Load{Tokens: 4096, Seqs: 1}, 2*(params-table)*4096 + 2*table, params * 2},
		{"tied decode", true, Load{Tokens: 64, Seqs: 64}, 2 * params * 64, params * 2},
	} {
		s := shape
		s.TiedEmbeddings = tc.tied
		c := NewCosts(hw, s, Tuning{ComputeEff: 1, MemoryEff: 1})
		if got := c.denseFLOPs(tc.load); math.Abs(got-tc.flops) > 1e-9*tc.flops {
			t.Errorf("%s: %.6g FLOPs, want %.6g", tc.name, got, tc.flops)
		}
		if got := c.DenseBytes - c.unreadBytes(); math.Abs(got-tc.read) > 1e-9*tc.read {
			t.Errorf("%s: reads %.6g bytes of weights, want %.6g", tc.name, got, tc.read)
		}
	}
	s := shape
	s.VocabSize = 0
	if c := NewCosts(hw, s, Tuning{ComputeEff: 1, MemoryEff: 1}); c.Vocabulary() || math.Abs(c.denseFLOPs(Load{Tokens: 10, Seqs: 1})-2*params*10) > 1 {
		t.Error("without a vocabulary every token multiplies through every parameter")
	}
}
