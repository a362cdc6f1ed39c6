package presets_test

import (
	"bufio"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator/sched"
)

// TestGEMMFits holds each family's tile model to its kernel table: the
// median |error| of a product's time it states, and no worse than 30% in
// the root mean square of log time (the tables' smallest products, a few
// microseconds, are the loose ones).
func TestGEMMFits(t *testing.T) {
	for _, tc := range []struct{ family, table, gpu string }{
		{"hopper", "testdata/xla_matmul_sm_90.csv", "h100-80gb"},
		{"blackwell", "testdata/xla_matmul_sm_100_B200.csv", "b200"},
	} {
		fit, ok := presets.GEMMFitFor(tc.family)
		hw, found := presets.HardwareNamed(tc.gpu)
		if !ok || !found {
			t.Fatalf("%s: no fit or no %s", tc.family, tc.gpu)
		}
		g := sched.GEMMTiles{SMs: fit.SMs, TileRows: fit.TileRows, TileCols: fit.TileCols, TileEff: fit.TileEff,
			KernelUs: fit.KernelUs, KPad: fit.KPad}
		var errs []float64
		var sq float64
		for _, r := range readTable(t, tc.table) {
			b, m, n, k, flops := int(r[0]), int(r[1]), int(r[2]), int(r[3]), r[4]
			measured := 2 * float64(b*m*n*k) / flops
			e := math.Log(g.Seconds(b*m, n, k, hw.PeakTFLOPS*1e12) / measured)
			errs = append(errs, math.Abs(math.Expm1(e)))
			sq += e * e
		}
		slices.Sort(errs)
		median, rms := 100*errs[len(errs)/2], math.Sqrt(sq/float64(len(errs)))
		t.Logf("%s: %d products, median |error| %.1f%%, rms log error %.3f", tc.family, len(errs), median, rms)
		if len(errs) != 375 || math.Abs(median-fit.MedianErrPct) > 0.1 || rms > 0.3 {
			t.Errorf("%s: %d products, median %.2f%% (stated %.1f%%), rms %.3f", tc.family, len(errs), median, fit.MedianErrPct, rms)
		}
	}
}

// readTable reads a kernel table's rows of b, m, n, k and FLOP/s.
func readTable(t *testing.T, path string) [][5]float64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][5]float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != 5 || fields[0] == "b" {
			continue
		}
		var r [5]float64
		for i, s := range fields {
			if r[i], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatalf("%s: %q: %v", path, sc.Text(), err)
			}
		}
		rows = append(rows, r)
	}
	return rows
}
