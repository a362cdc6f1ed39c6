package cmd

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kneebench/knee/predict/battery"
	"github.com/kneebench/knee/results"
)

// TestBatteryPredictsAsKneePredict: the public battery (predict/battery)
// stands for knee predict's answers on the cells measured over HTTP, so
// the two must agree: on a KV-starved burst, where a preempted request's
// cached blocks decide the figures (the battery once dropped them and
// came out 2.8× knee predict), and on a closed loop, whose TTFT p95 moves
// by a quarter when the streams start at one instant instead of apart as
// knee's client starts them. The battery takes numpy's percentiles and
// knee's summary HDR's, so 3% apart is agreement.
func TestBatteryPredictsAsKneePredict(t *testing.T) {
	heavy(t)
	cells, err := battery.ReadFile("../predict/battery/testdata/cells.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"gpustack/a100-80gb/qwen3-32b/vllm-bf16/32000": true, "silybench/bf16/balanced/c16": true}
	for _, c := range cells {
		if want[c.Name] {
			delete(want, c.Name)
			t.Run(filepath.Base(c.Name), func(t *testing.T) { agreeWithBattery(t, c) })
		}
	}
	if len(want) > 0 {
		t.Fatalf("cells gone from the battery: %v", want)
	}
}

func agreeWithBattery(t *testing.T, c *battery.Cell) {
	cfg, _, err := c.Config()
	if err != nil {
		t.Fatal(err)
	}
	bat, err := battery.Simulate(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	users := c.Concurrency
	if users == 0 {
		users = c.Requests
	}
	dir := t.TempDir()
	code, out, errOut := execute(t, "predict", "--sim-preset", c.Spec(), "--endpoint", "completions",
		"--concurrency", strconv.Itoa(users), "--requests", strconv.Itoa(c.Requests), "--warmup", "0",
		"--duration", "0", "--drain-timeout", "0", "--input-tokens", strconv.Itoa(c.Input),
		"--max-tokens", strconv.Itoa(c.Output), "--ignore-eos", "--label", "b", "--out-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	st := sw.Levels[0].Run.Stats
	pred := map[string]float64{"ttft_p50": st.TTFT.P50, "ttft_mean": st.TTFT.Mean, "ttft_p95": st.TTFT.P95,
		"tpot_mean": st.TPOT.Mean, "tpot_p95": st.TPOT.P95, "e2e_p95": st.E2E.P95}
	for m, b := range bat {
		p, ok := pred[m]
		if !ok {
			continue
		}
		line := fmt.Sprintf("%s: battery %.4g, knee predict %.4g", m, b, p)
		t.Log(line)
		if math.Abs(p/b-1) > 0.03 {
			t.Errorf("%s: more than 3%% apart", line)
		}
	}
}
