package predict

import (
	"errors"
	"fmt"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator/model"
)

// gemmSuffix marks a shaped candidate's name, as an engine's rules do.
const gemmSuffix = " · gemm_tiles"

// shapePreset is TargetSpec.GEMMTiles: the preset's GPU shaped, or a
// usage error saying why it cannot be.
func shapePreset(s TargetSpec, models *model.ModelsFile) error {
	if s.Preset == "" {
		return &model.UsageError{Err: errors.New("--gemm-tiles gives a --sim-preset's GPU its fitted kernel table; " +
			"a --sim-models file gives its hardware gemm_tiles itself")}
	}
	if models.ShapeProducts() {
		return nil
	}
	gpu := models.Models[0].Hardware
	hw, _ := presets.HardwareNamed(gpu)
	why := fmt.Sprintf("%s is %s, which has no fitted kernel table (knee presets lists those that have)", gpu, hw.Family)
	if _, ok := presets.GEMMFitFor(hw.Family); ok {
		why = "its model routes experts, whose products the tiles do not shape"
	}
	return &model.UsageError{Err: fmt.Errorf("--gemm-tiles: %s: %s", s.Preset, why)}
}
