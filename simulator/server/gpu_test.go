package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/simulator/sched"
)

// TestPowerMeter: a GPU of 70 W idle and 700 W limit draws 70 W idle; a
// memory-bound step draws half the range (385 W) and a compute-bound one
// the limit; the energy counter is their integral, and the last second's
// power and utilisation are what ran in it.
func TestPowerMeter(t *testing.T) {
	t0 := time.Unix(100, 0)
	p := newPowerMeter(70, 700, t0)
	if e, w, u := p.read(t0.Add(2 * time.Second)); e != 140 || w != 70 || u != 0 {
		t.Errorf("idle: %v J, %v W, %v%%; want 140 J, 70 W, 0%%", e, w, u)
	}
	// 2.5 s idle, then a 0.5 s decode step (no compute time).
	p.step(&sched.Step{Duration: 0.5, Memory: 0.5}, t0.Add(3*time.Second))
	// then a 0.5 s prefill step, all compute, ending at 3.5 s.
	p.step(&sched.Step{Duration: 0.5, Compute: 0.5}, t0.Add(3500*time.Millisecond))
	e, w, u := p.read(t0.Add(3500 * time.Millisecond))
	if want := 70*2.5 + 385*0.5 + 700*0.5; e != want {
		t.Errorf("energy %v J, want %v", e, want)
	}
	if want := 385*0.5 + 700*0.5; w != want || u != 100 {
		t.Errorf("last second: %v W, %v%%; want %v W, 100%%", w, u, want)
	}
}

// TestGPUMetricsEndpoint: knee sim serves a preset's GPUs in the DCGM
// exporter's names, idle at the preset's idle draw; a model without power
// figures has none, and the route says what to give.
func TestGPUMetricsEndpoint(t *testing.T) {
	t.Parallel()
	inBubble(t, testGPUMetricsEndpoint)
}

func testGPUMetricsEndpoint(t *testing.T) {
	ts := startSim(t, "models:\n  - name: m\n    preset: h100-80gbx2/llama-3.1-8b\n", "", "")
	code, b := get(t, ts.URL+"/gpu/metrics")
	text := string(b)
	if code != 200 || strings.Count(text, "DCGM_FI_DEV_POWER_USAGE{") != 2 || !strings.Contains(text, `modelName="h100-80gb"`) {
		t.Fatalf("%d\n%s", code, text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "DCGM_FI_DEV_POWER_USAGE{") {
			v, _ := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			if v != 70 {
				t.Errorf("idle power %v W, want the preset's 70", v)
			}
		}
	}
	bare := startSim(t, testModels, "", "")
	if code, b := get(t, bare.URL+"/gpu/metrics"); code != 404 || !strings.Contains(string(b), "max_power_w") {
		t.Errorf("no power figures: %d %s", code, b)
	}
}
