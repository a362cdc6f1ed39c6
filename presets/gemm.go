package presets

// GEMMFit is one GPU family's matrix products by shape: the figures of
// the scheduler core's wave-quantised tile model (sched.GEMMTiles), fitted
// to a public table of kernel throughput, not to serving runs. It is not
// applied by the presets: a models file opts in with its hardware's
// gemm_tiles (docs/fidelity.md says why).
type GEMMFit struct {
	SMs                int
	TileRows, TileCols int
	TileEff, KernelUs  float64
	KPad               int
	// MedianErrPct is the fit's median |error| over its table, and
	// Source the table.
	MedianErrPct float64
	Source       string
}

// xlaTable is where the fits' measurements come from.
const xlaTable = "XLA's matmul performance table (openxla/xla, matmul_interpolator_data.h), bf16, 375 shapes of 256 to 4,096"

// gemmFits are fitted by least squares of log time over a grid (tile
// shapes 64–256, efficiency in steps of 0.02, kernel cost in µs, k padding
// in steps of 64) to presets/testdata's tables at the data sheets' dense
// bf16 peaks; TestGEMMFits checks the errors. CDNA3's table (gfx942) is
// fitted by no one tile shape of the grid better than a median error of
// 23% (its times jump across sizes in ways one tile shape does not
// follow) and is left out.
var gemmFits = map[string]GEMMFit{
	"hopper": {SMs: 132, TileRows: 64, TileCols: 128, TileEff: 0.94, KernelUs: 5, KPad: 256,
		MedianErrPct: 5.0, Source: xlaTable + " on sm_90 (H100)"},
	"blackwell": {SMs: 148, TileRows: 64, TileCols: 128, TileEff: 0.74, KernelUs: 5, KPad: 256,
		MedianErrPct: 3.8, Source: xlaTable + " on sm_100 (B200)"},
}

// GEMMFitFor is a family's fit, if there is one.
func GEMMFitFor(family string) (GEMMFit, bool) {
	g, ok := gemmFits[family]
	return g, ok
}
