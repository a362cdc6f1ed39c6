package model

import (
	"errors"
	"fmt"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator/sched"
)

// GEMMSpec is a hardware profile's gemm_tiles: its matrix products by
// shape (sched.GEMMTiles), as fitted to kernel measurements. A profile
// without it gives every product one efficiency.
type GEMMSpec struct {
	SMs            int     `yaml:"sms"`
	TileRows       int     `yaml:"tile_rows"`
	TileCols       int     `yaml:"tile_cols"`
	TileEfficiency float64 `yaml:"tile_efficiency"`
	KernelUs       float64 `yaml:"kernel_us"`
	KPad           int     `yaml:"k_pad"`
	// Source says what the figures were fitted to.
	Source string `yaml:"source,omitempty"`
}

// validate bounds the figures: counts a GPU could have, a tile's share of
// peak no more than all of it.
func (g *GEMMSpec) validate() error {
	if g == nil {
		return nil
	}
	if g.SMs < 1 || g.SMs > 1<<16 || g.TileRows < 1 || g.TileRows > 1<<12 || g.TileCols < 1 || g.TileCols > 1<<12 ||
		!within(g.TileEfficiency, 1e-3, 1) || !within(g.KernelUs, 0, 1e6) || g.KPad < 0 || g.KPad > 1<<20 {
		return errors.New("gemm_tiles: sms from 1 to 65,536, tile_rows and tile_cols from 1 to 4,096, " +
			"tile_efficiency above 0 and at most 1, kernel_us from 0 to 1,000,000, k_pad from 0 to 1,048,576")
	}
	return nil
}

// tiles is the scheduler core's form, nil without a spec.
func (g *GEMMSpec) tiles() *sched.GEMMTiles {
	if g == nil {
		return nil
	}
	return &sched.GEMMTiles{SMs: g.SMs, TileRows: g.TileRows, TileCols: g.TileCols, TileEff: g.TileEfficiency,
		KernelUs: g.KernelUs, KPad: g.KPad}
}

// checkGEMM refuses a model on a profile with gemm_tiles that the tiles
// cannot shape (experts, or no architecture), where the term would be
// dropped without a word.
func checkGEMM(hwName string, hw HardwareSpec, cfg sched.Config) error {
	if hw.GEMM == nil || cfg.Costs.ShapedProducts() {
		return nil
	}
	return fmt.Errorf("hardware %q has gemm_tiles, which shape a dense model's products: give this model "+
		"architecture (hidden_size, attention_heads), kv_cache's layers, kv_heads and head_dim, and no experts, "+
		"or run it on a profile without gemm_tiles", hwName)
}

// ShapeProducts gives the GPU of a preset's one model its family's matrix
// products by shape (presets.GEMMFitFor), and says whether it did. A GPU
// whose family has no fitted table, or a model the tiles cannot shape
// (the scheduler core decides: experts, no architecture), leaves the file
// as it was.
func (f *ModelsFile) ShapeProducts() bool {
	if len(f.Models) != 1 {
		return false
	}
	m := &f.Models[0]
	hw, ok := f.Hardware[m.Hardware]
	gpu, known := presets.HardwareNamed(m.Hardware)
	fit, fitted := presets.GEMMFitFor(gpu.Family)
	if !ok || !known || !fitted {
		return false
	}
	plain := hw
	hw.GEMM = &GEMMSpec{SMs: fit.SMs, TileRows: fit.TileRows, TileCols: fit.TileCols, TileEfficiency: fit.TileEff,
		KernelUs: fit.KernelUs, KPad: fit.KPad, Source: fit.Source}
	f.Hardware[m.Hardware] = hw
	if cfg := f.SchedConfig(m); cfg.Costs.ShapedProducts() {
		return true
	}
	f.Hardware[m.Hardware] = plain
	return false
}
