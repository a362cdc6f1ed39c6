package sched

import "math"

// GEMMTiles is a GPU's matrix products by shape, as a wave-quantised
// roofline: a product of m rows (the step's tokens) by an n-wide, k-deep
// matrix is cut into TileRows × TileCols output tiles, the SMs take them
// a wave at a time, a tile costs its 2·TileRows·TileCols·(k+KPad) FLOPs at
// TileEff of one SM's share of the peak, and a kernel KernelUs more. A
// step of few tokens fills few tiles, and each GPU's slice of a matrix
// under tensor parallelism is narrower, so both reach a smaller share of
// peak than one efficiency for every product says. The figures are fitted
// to public kernel measurements (presets.GEMMFit), not to serving runs.
type GEMMTiles struct {
	SMs                int
	TileRows, TileCols int
	TileEff            float64
	KernelUs           float64
	KPad               int
}

// gemmMeasuredRows is the fewest rows the fitted tables measured: below it
// a product reads its weights more than it computes (the cost model's
// memory term), and the tile model, fitted above it, is held there.
const gemmMeasuredRows = 256

// gemmReferenceRows is the step whose products run at the tuning's
// compute efficiency: a large prefill step (the tables' largest m) of the
// model on one GPU, so the term slows the steps smaller than that, and
// every step of a GPU's narrower slice under tensor parallelism.
const gemmReferenceRows = 4096

// Seconds is one product's time, m rows by a k × n matrix, at peak
// FLOP/s for the whole GPU.
func (g *GEMMTiles) Seconds(m, n, k int, peak float64) float64 {
	tiles := ceilDiv(m, g.TileRows) * ceilDiv(n, g.TileCols)
	waves := ceilDiv(tiles, g.SMs)
	perTile := 2 * float64(g.TileRows*g.TileCols) * float64(k+g.KPad) / (peak / float64(g.SMs) * g.TileEff)
	return float64(waves)*perTile + g.KernelUs*1e-6
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// layerProducts are one layer's dense products on one GPU of a
// tensor-parallel group, as (k, n): the fused QKV projection and the
// output projection of attention, the fused gate/up and the down
// projection of the MLP. The MLP's width is what the active parameters
// leave per layer after attention (embeddings counted in it: a slightly
// wide MLP, whose tiles are plenty either way).
func layerProducts(m ModelShape, active float64) [][2]int {
	if m.Layers <= 0 || m.HiddenSize <= 0 || m.AttentionHeads <= 0 || m.HeadDim <= 0 || m.Experts > 0 {
		return nil
	}
	tp := max(m.TensorParallel, 1)
	h, q := m.HiddenSize, m.AttentionHeads*m.HeadDim
	kv := 2 * max(m.KVHeads, 1) * m.HeadDim
	attn := float64(h*(q+kv) + q*h)
	ffn := int((active/float64(m.Layers) - attn) / float64(3*h))
	if ffn <= 0 {
		return nil
	}
	prods := [][2]int{{h, (q + kv) / tp}, {q / tp, h}, {h, 2 * ffn / tp}, {ffn / tp, h}}
	for _, p := range prods {
		if p[0] < 1 || p[1] < 1 {
			return nil // a slice thinner than a column: no shape to speak of
		}
	}
	return prods
}

// gemmShape is the products' share of their reference speed by the
// step's tokens and the slice: at most 1, less for small steps and
// narrow slices.
type gemmShape struct {
	g     GEMMTiles
	prods [][2]int
	ref   float64
}

func newGEMMShape(g *GEMMTiles, m ModelShape, active float64) *gemmShape {
	if g == nil || g.SMs <= 0 || g.TileRows <= 0 || g.TileCols <= 0 || !(g.TileEff > 0) {
		return nil
	}
	prods := layerProducts(m, active)
	if prods == nil {
		return nil
	}
	whole := m
	whole.TensorParallel = 1
	ref := (&gemmShape{g: *g, prods: layerProducts(whole, active)}).flopsPerSecond(gemmReferenceRows)
	if !(ref > 0) || math.IsInf(ref, 0) {
		return nil
	}
	return &gemmShape{g: *g, prods: prods, ref: ref}
}

// ShapedProducts says the costs slow products by their shape: the GPU
// has tiles and the model the dense shape they need.
func (c *Costs) ShapedProducts() bool { return c.gemm != nil }

// flopsPerSecond is one layer's products' FLOPs over their time at m rows
// (on a unit peak: only the ratio matters).
func (s *gemmShape) flopsPerSecond(m int) float64 {
	var flops, secs float64
	for _, p := range s.prods {
		flops += 2 * float64(m) * float64(p[0]) * float64(p[1])
		secs += s.g.Seconds(m, p[1], p[0], 1e15)
	}
	return flops / secs
}

// relative is the products' speed at tokens rows over their speed at the
// reference: what the tuning's compute efficiency is multiplied by.
func (s *gemmShape) relative(tokens int) float64 {
	if s == nil {
		return 1
	}
	return math.Min(1, s.flopsPerSecond(max(tokens, gemmMeasuredRows))/s.ref)
}
