package gpumetrics

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/results"
)

// dcgm is an in-test DCGM exporter: two GPUs whose power and energy
// counter the test sets, in dcgm-exporter's text.
type dcgm struct {
	mu       sync.Mutex
	powerW   [2]float64
	energyMJ [2]float64
	noEnergy bool
}

func (d *dcgm) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	b.WriteString("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
	for i := range 2 {
		fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node\"} %g\n", i, i, i, d.powerW[i])
	}
	if !d.noEnergy {
		b.WriteString("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
		for i := range 2 {
			fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\",UUID=\"GPU-%d\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node\"} %g\n", i, i, i, d.energyMJ[i])
		}
	}
	b.WriteString("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node\"} 87\n")
	w.Write([]byte(b.String()))
}

// TestJoulesPerTokenFromTheCounter: the energy is the counter's advance
// across the window, exactly: 300,000 mJ and 60,000 mJ on two GPUs over a
// window of 36,000 output tokens is 0.01 J a token, whatever power was
// sampled in between.
func TestJoulesPerTokenFromTheCounter(t *testing.T) {
	quiet.Wire(t, func() { testJoulesPerTokenFromTheCounter(t) })
}

func testJoulesPerTokenFromTheCounter(t *testing.T) {
	d := &dcgm{powerW: [2]float64{650, 120}, energyMJ: [2]float64{5e9, 7e9}}
	ts := httptest.NewServer(d)
	defer ts.Close()
	clock := time.Unix(1000, 0)
	w := New([]string{ts.URL + "/metrics"}, time.Hour)
	w.now = func() time.Time { return clock }
	w.Start(context.Background())
	d.mu.Lock()
	d.energyMJ[0] += 300_000
	d.energyMJ[1] += 60_000
	d.mu.Unlock()
	clock = clock.Add(2 * time.Second)
	w.End(context.Background())
	res := &results.Run{}
	res.Tokens.OutputTotal, res.Tokens.InputTotal, res.Requests.OK = 36_000, 120_000, 90
	w.Fill(res)
	g := res.GPU
	if g == nil || len(g.GPUs) != 2 {
		t.Fatalf("figures %+v", g)
	}
	for name, c := range map[string][2]float64{
		"energy J": {g.EnergyJ, 360}, "J per output token": {g.JoulesPerOutputToken, 0.01}, "J per request": {g.JoulesPerRequest, 4},
		"J per 1k prompt tokens": {g.JoulesPer1kPromptTokens, 3}, "tokens per J": {g.OutputTokensPerJoule, 100},
		"mean power W": {g.PowerMeanW, 180}, "GPU 0 energy J": {g.GPUs[0].EnergyJ, 300}, "GPU 0 max power": {g.GPUs[0].PowerMaxW, 650},
		"summed max power": {g.PowerMaxW, 770}, "GPU 0 util": {g.GPUs[0].UtilMeanPct, 87},
	} {
		if math.Abs(c[0]-c[1]) > 0.01*math.Abs(c[1]) {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
	if g.GPUs[0].EnergySource != "counter" || g.GPUs[0].Model != "NVIDIA H100 80GB HBM3" || g.GPUs[0].UUID != "GPU-0" {
		t.Errorf("GPU 0: %+v", g.GPUs[0])
	}
}

// TestIntegratedPowerAgreesWithTheCounter: at a constant 400 W sampled
// each second for ten, power integrated without the counter gives what
// the counter gives, 4,000 J a GPU; a counter that went back falls back
// to the integral and says so.
func TestIntegratedPowerAgreesWithTheCounter(t *testing.T) {
	quiet.Wire(t, func() { testIntegratedPowerAgreesWithTheCounter(t) })
}

func testIntegratedPowerAgreesWithTheCounter(t *testing.T) {
	window := func(noEnergy, reset bool) *results.GPUFigures {
		d := &dcgm{powerW: [2]float64{400, 400}, energyMJ: [2]float64{1e9, 1e9}, noEnergy: noEnergy}
		ts := httptest.NewServer(d)
		defer ts.Close()
		w := New([]string{ts.URL}, time.Hour)
		at := time.Unix(0, 0)
		var samples []*scrape
		for i := 0; i <= 10; i++ {
			w.now = func() time.Time { return at.Add(time.Duration(i) * time.Second) }
			samples = append(samples, w.scrapeAll(context.Background()))
			d.mu.Lock()
			for g := range 2 {
				d.energyMJ[g] += 400_000
				if reset && i == 5 {
					d.energyMJ[g] = 0
				}
			}
			d.mu.Unlock()
		}
		return figures(samples)
	}
	counter, integral, reset := window(false, false), window(true, false), window(false, true)
	for name, g := range map[string]*results.GPUFigures{"counter": counter, "integral": integral, "reset": reset} {
		if math.Abs(g.EnergyJ-8000) > 80 {
			t.Errorf("%s: %v J, want 8,000", name, g.EnergyJ)
		}
	}
	if integral.GPUs[0].EnergySource != "integrated power" || !strings.Contains(strings.Join(reset.Warnings, " "), "went back") {
		t.Errorf("sources: %q; reset warnings %q", integral.GPUs[0].EnergySource, reset.Warnings)
	}
}

// TestNotAnExporter: an endpoint that is not a DCGM exporter leaves a
// warning naming it, and no figures are invented.
func TestNotAnExporter(t *testing.T) {
	quiet.Wire(t, func() { testNotAnExporter(t) })
}

func testNotAnExporter(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("vllm:num_requests_running 3\n")) }))
	defer ts.Close()
	w := New([]string{ts.URL}, time.Hour)
	w.Start(context.Background())
	w.End(context.Background())
	res := &results.Run{}
	w.Fill(res)
	if res.GPU == nil || res.GPU.EnergyJ != 0 || !strings.Contains(strings.Join(res.GPU.Warnings, " "), "neither a DCGM exporter") {
		t.Errorf("%+v", res.GPU)
	}
}

// amd is an in-test AMD device metrics exporter: one MI300X whose
// accumulated energy (µJ, a gauge, as the exporter declares it) the test
// sets, reporting both socket and GPU power.
type amd struct {
	mu       sync.Mutex
	energyUJ float64
}

func (a *amd) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	labels := `card_model="AMD Instinct MI300X",gpu_compute_partition_type="spx",gpu_id="0",gpu_memory_partition_type="nps1",gpu_partition_id="0",gpu_uuid="5fff74b5-0000-1000-804e-c3a7b55e12a1",hostname="node-a",serial_number="692251001124"`
	fmt.Fprintf(w, "# HELP gpu_power_usage GPU Power usage in Watts\n# TYPE gpu_power_usage gauge\ngpu_power_usage{%s} 310\n", labels)
	fmt.Fprintf(w, "# HELP gpu_package_power Current socket power in Watts\n# TYPE gpu_package_power gauge\ngpu_package_power{%s} 640\n", labels)
	fmt.Fprintf(w, "# HELP gpu_energy_consumed Accumulated energy consumed by the GPU in uJ\n# TYPE gpu_energy_consumed gauge\ngpu_energy_consumed{%s} %.0f\n", labels, a.energyUJ)
	fmt.Fprintf(w, "# TYPE gpu_gfx_activity gauge\ngpu_gfx_activity{%s} 93\n# TYPE gpu_used_vram gauge\ngpu_used_vram{%s} 150000\n", labels, labels)
}

// TestAMDExporter: AMD's exporter names and units read as DCGM's do:
// 1.2e9 µJ across the window is 1,200 J, over 48,000 output tokens 0.025
// J a token; socket power wins over GPU power; the GPU is named by its
// AMD labels.
func TestAMDExporter(t *testing.T) {
	quiet.Wire(t, func() { testAMDExporter(t) })
}

func testAMDExporter(t *testing.T) {
	a := &amd{energyUJ: 8.5e12}
	ts := httptest.NewServer(a)
	defer ts.Close()
	clock := time.Unix(1000, 0)
	w := New([]string{ts.URL + "/metrics"}, time.Hour)
	w.now = func() time.Time { return clock }
	w.Start(context.Background())
	a.mu.Lock()
	a.energyUJ += 1.2e9
	a.mu.Unlock()
	clock = clock.Add(2 * time.Second)
	w.End(context.Background())
	res := &results.Run{}
	res.Tokens.OutputTotal = 48_000
	w.Fill(res)
	g := res.GPU
	if g == nil || len(g.GPUs) != 1 {
		t.Fatalf("figures %+v", g)
	}
	f := g.GPUs[0]
	if math.Abs(g.EnergyJ-1200) > 1e-6 || math.Abs(g.JoulesPerOutputToken-0.025) > 1e-9 || f.EnergySource != "counter" ||
		f.PowerMaxW != 640 || f.UtilMeanPct != 93 || f.FBUsedMaxMiB != 150000 ||
		f.GPU != "0" || f.Model != "AMD Instinct MI300X" || f.Host != "node-a" || !strings.HasPrefix(f.UUID, "5fff74b5") {
		t.Errorf("figures %+v, GPU %+v", g, f)
	}
}

// bodyTransport answers every request with one body, no socket opened.
type bodyTransport string

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(string(b))), Header: http.Header{}, Request: r}, nil
}

// TestThousandsOfSeriesAreNoNode: an exporter listing 16,000 GPUs is no
// node's; it is left out with a word, not read as 16,000 GPUs every
// second.
func TestThousandsOfSeriesAreNoNode(t *testing.T) {
	var b strings.Builder
	b.WriteString("# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
	for i := range 16000 {
		fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\"} 300\n", i, i)
	}
	w := New([]string{"http://exporter.test/metrics"}, time.Hour)
	w.client = &http.Client{Transport: bodyTransport(b.String())}
	s := w.scrapeAll(context.Background())
	if len(s.gpus) != 0 || len(s.errs) != 1 || !strings.Contains(s.errs[0], "16000 GPUs") {
		t.Errorf("%d GPUs read, errors %v", len(s.gpus), s.errs)
	}
}
