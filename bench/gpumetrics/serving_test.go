package gpumetrics

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/results"
)

// TestIdleGPUsLeftOut: an exporter lists every GPU of the node; one
// serving at 60% and one idle at 0% over the window: the energy counts
// the serving one alone, says which it left out, and an implausible power
// reading (an exporter's 1e308 W) is no sample.
func TestIdleGPUsLeftOut(t *testing.T) {
	busy, idle := key{endpoint: "e", gpu: "0"}, key{endpoint: "e", gpu: "1"}
	at := time.Unix(1000, 0)
	mk := func(s time.Duration, busyMJ, idleMJ float64, idlePower float64) *scrape {
		r0, r1 := reading{}, reading{}
		setPower(&r0, 500)
		setEnergy(&r0, busyMJ)
		setUtil(&r0, 60)
		setPower(&r1, idlePower)
		setEnergy(&r1, idleMJ)
		setUtil(&r1, 0)
		return &scrape{at: at.Add(s), gpus: map[key]reading{busy: r0, idle: r1}}
	}
	g := figures([]*scrape{mk(0, 1e6, 2e6, 70), mk(time.Second, 1e6+250_000, 2e6+70_000, 1e308), mk(2*time.Second, 1e6+500_000, 2e6+140_000, 70)})
	if len(g.GPUs) != 2 || g.Serving() != 1 || !g.GPUs[1].Idle || g.GPUs[0].Idle {
		t.Fatalf("GPUs %+v", g.GPUs)
	}
	if math.Abs(g.EnergyJ-500) > 1e-9 || math.Abs(g.PowerMeanW-250) > 1e-9 {
		t.Errorf("energy %g J, mean %g W; want the serving GPU's 500 J over 2 s", g.EnergyJ, g.PowerMeanW)
	}
	if g.GPUs[1].PowerMaxW > 5000 {
		t.Errorf("an implausible reading was kept: max %g W", g.GPUs[1].PowerMaxW)
	}
	if !strings.Contains(strings.Join(g.Notes, " "), "e GPU 1") {
		t.Errorf("notes %v do not name the idle GPU", g.Notes)
	}
	var r results.Run
	r.Tokens.OutputTotal = 1000
	g.PerWork(&r)
	if math.Abs(g.JoulesPerOutputToken-0.5) > 1e-9 {
		t.Errorf("%g J a token, want the serving GPU's 0.5", g.JoulesPerOutputToken)
	}
}

// TestImplausibleCounterIntegrated: an energy counter that jumps by 1e308
// mJ in a window is no reading: the power is integrated instead, and the
// figures stay finite, so the result can be written.
func TestImplausibleCounterIntegrated(t *testing.T) {
	k := key{endpoint: "e", gpu: "0"}
	at := time.Unix(1000, 0)
	mk := func(s time.Duration, mj float64) *scrape {
		r := reading{}
		setPower(&r, 400)
		setEnergy(&r, mj)
		return &scrape{at: at.Add(s), gpus: map[key]reading{k: r}}
	}
	g := figures([]*scrape{mk(0, 1), mk(time.Second, 1e307), mk(2*time.Second, 1e308)})
	if math.IsInf(g.EnergyJ, 0) || math.IsNaN(g.EnergyJ) || math.Abs(g.EnergyJ-800) > 1e-9 || g.GPUs[0].EnergySource != "integrated power" {
		t.Errorf("energy %g J from %s, want 800 J integrated", g.EnergyJ, g.GPUs[0].EnergySource)
	}
	if !strings.Contains(strings.Join(g.Warnings, " "), "implausible") {
		t.Errorf("warnings %v", g.Warnings)
	}
}

// TestNoPlausibleReadingIsNoFigure (issue 56): an exporter whose every
// reading is refused (1e308 W, a counter past float64) gives no GPU
// figures and says why, rather than a GPU that drew 0 J.
func TestNoPlausibleReadingIsNoFigure(t *testing.T) {
	k := key{endpoint: "e", gpu: "0"}
	at := time.Unix(1000, 0)
	mk := func(s time.Duration) *scrape {
		r := reading{}
		setPower(&r, 1e308)
		setEnergy(&r, math.Inf(1))
		return &scrape{at: at.Add(s), gpus: map[key]reading{k: r}}
	}
	g := figures([]*scrape{mk(0), mk(time.Second), mk(2 * time.Second)})
	if len(g.GPUs) != 0 || g.EnergyJ != 0 {
		t.Errorf("GPUs %+v, %g J: want none", g.GPUs, g.EnergyJ)
	}
	if !strings.Contains(strings.Join(g.Warnings, " "), "no plausible power or energy reading") {
		t.Errorf("warnings %v", g.Warnings)
	}
}

// FuzzExporterText: any text an exporter sends is read without a panic
// into at most maxGPUsPerEndpoint GPUs, every reading kept finite, not
// negative, and power within what a GPU draws.
func FuzzExporterText(f *testing.F) {
	f.Add("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 300\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 1e9\n")
	f.Add("# TYPE gpu_energy_consumed gauge\ngpu_energy_consumed{gpu_id=\"1\",gpu_partition_id=\"2\"} 1e308\ngpu_power_usage{gpu_id=\"1\"} NaN\n")
	f.Add("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} +Inf\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} -5\n")
	f.Fuzz(func(t *testing.T, text string) {
		s := &scrape{gpus: map[key]reading{}}
		_ = parseExporter("e", strings.NewReader(text), s)
		if len(s.gpus) > maxGPUsPerEndpoint {
			t.Fatalf("%d GPUs kept", len(s.gpus))
		}
		for k, r := range s.gpus {
			for _, v := range []float64{r.power, r.energyMJ, r.util, r.fb} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("GPU %v kept %v", k, r)
				}
			}
			if r.power > maxPlausibleW {
				t.Fatalf("GPU %v kept %g W", k, r.power)
			}
		}
	})
}
