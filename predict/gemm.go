package predict

import (
	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator/model"
)

// shapeProducts gives a preset candidate's GPU its family's matrix
// products by shape (presets.GEMMFitFor) when the plan asks for them
// (CandidateSpec.GEMMTiles), and says whether it did: only a dense model
// with its architecture on a family with a fitted kernel table can be
// shaped; the others keep one efficiency for every product.
func (o CandidateSpec) shapeProducts(models *model.ModelsFile, gpu string) bool {
	hw, ok := presets.HardwareNamed(gpu)
	fit, fitted := presets.GEMMFitFor(hw.Family)
	if !o.GEMMTiles || !ok || !fitted || len(models.Models) != 1 {
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
