package predict

import (
	"errors"
	"fmt"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator/model"
)

// shapeProducts gives a preset's GPU (gpu, its hardware's name) its
// family's matrix products by shape (presets.GEMMFitFor), and says
// whether it did: only a dense model with its architecture on a family
// with a fitted kernel table can be shaped; the others keep one
// efficiency for every product.
func shapeProducts(models *model.ModelsFile, gpu string) bool {
	hw, ok := presets.HardwareNamed(gpu)
	fit, fitted := presets.GEMMFitFor(hw.Family)
	if !ok || !fitted || len(models.Models) != 1 {
		return false
	}
	m := models.Models[0]
	if m.Experts != nil || m.Architecture == nil {
		return false
	}
	spec, ok := models.Hardware[m.Hardware]
	if !ok {
		return false
	}
	spec.GEMM = &model.GEMMSpec{SMs: fit.SMs, TileRows: fit.TileRows, TileCols: fit.TileCols, TileEfficiency: fit.TileEff,
		KernelUs: fit.KernelUs, KPad: fit.KPad, Source: fit.Source}
	models.Hardware[m.Hardware] = spec
	return true
}

// gemmSuffix marks a shaped candidate's name, as an engine's rules do.
const gemmSuffix = " · gemm_tiles"

// shapePreset is TargetSpec.GEMMTiles: the preset's GPU shaped, or a
// usage error saying why it cannot be.
func shapePreset(s TargetSpec, models *model.ModelsFile) error {
	if s.Preset == "" {
		return &model.UsageError{Err: errors.New("--gemm-tiles gives a --sim-preset's GPU its fitted kernel table; " +
			"a --sim-models file gives its hardware gemm_tiles itself")}
	}
	gpu := models.Models[0].Hardware
	if shapeProducts(models, gpu) {
		return nil
	}
	hw, _ := presets.HardwareNamed(gpu)
	why := fmt.Sprintf("%s is %s, which has no fitted kernel table (knee presets lists those that have)", gpu, hw.Family)
	if _, ok := presets.GEMMFitFor(hw.Family); ok {
		why = "its model routes experts, whose products the tiles do not shape"
	}
	return &model.UsageError{Err: fmt.Errorf("--gemm-tiles: %s: %s", s.Preset, why)}
}
