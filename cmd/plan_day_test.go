package cmd

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestPlanDay (issue 38): knee plan --trace plans for the day's peak,
// then runs the answer through the day under each --autoscale policy and
// static provisioning for the peak: GPU-hours, minutes met, why the
// others missed. The rate steps from 20/s to 200/s at 30 minutes; the
// policy looks every 15 s, so it misses exactly 15 s of 200/s for scaling
// lag, then at least its 2-minute delay for the cold start.
func TestPlanDay(t *testing.T) {
	dir := t.TempDir()
	trace := writeFile(t, dir, "day.csv", "time,rate\n0,20\n1800,200\n")
	args := []string{"plan", "--trace", trace, "--input-tokens", "256", "--max-tokens", "32", "--window", "1m", "--seeds", "1",
		"--routing", "round-robin", "--tp", "1", "--slo", "ttft_p95:500", "--out-dir", dir, "--label", "d",
		"--autoscale", "utilisation=0.8,delay=2m", "--autoscale", "queue=2,delay=2m,max=40"}
	code, out, errOut := execute(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	p := readPlan(t, filepath.Join(dir, "d.json"))
	d := p.Day
	if p.Target != 200 || d == nil || len(d.Policies) != 3 || !d.Policies[0].Static || d.Capacity <= 0 || d.Saturation < d.Capacity {
		t.Fatalf("target %g, day %+v", p.Target, d)
	}
	static := d.Policies[0]
	n := int(math.Ceil(200 / d.Capacity))
	if static.PeakReplicas != n || math.Abs(static.GPUHours-float64(n)) > 1e-9 || static.MinutesMet != 60 || static.Minutes != 60 {
		t.Errorf("static for the peak: %+v, want %d replicas for the hour, every minute met", static, n)
	}
	util := d.Policies[1]
	if util.Name != "utilisation=0.8,delay=2m" || util.MissedBy[results.MissScalingLag] != 15*200 || util.MissedBy[results.MissColdStart] < 120*200 ||
		util.GPUHours >= static.GPUHours || len(util.Missed) == 0 || util.Missed[0].From != 30 {
		t.Errorf("utilisation=0.8: %+v", util)
	}
	if !strings.Contains(out, "day: "+trace+", 1h, peak 200/s, mean 110/s") || !strings.Contains(out, "utilisation=0.8,delay=2m") || !strings.Contains(out, "0:30–0:32 cold start") {
		t.Errorf("the day's table:\n%s", out)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "d-day.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(csv), "\n"); lines != 1+3*60 {
		t.Errorf("the day's CSV has %d lines, want a header and 60 minutes of 3 policies", lines)
	}
}

// TestPlanDayErrors: a day's flags are checked before anything is
// predicted, each refusal naming what is wrong.
func TestPlanDayErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "day.csv", "0,1\n60,2\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trace", good, "--rate", "2"}, "--trace is the load"},
		{[]string{"--trace", good, "--find-max-rate"}, "--trace is the load"},
		{[]string{"--rate", "2", "--autoscale", "queue=2"}, "give its rate curve with --trace"},
		{[]string{"--trace", good, "--autoscale", "queue=0"}, "--autoscale"},
		{[]string{"--trace", good, "--autoscale", "utilisation=0.8,max=0"}, "max 0"},
		{[]string{"--trace", good, "--min-attainment", "1.5"}, "--min-attainment"},
		{[]string{"--trace", writeFile(t, dir, "bad.csv", "0,1\n30,x\n")}, "line 2"},
		{[]string{"--trace", writeFile(t, dir, "zero.csv", "0,0\n60,0\n")}, "every rate is 0"},
		{[]string{"--trace", good, "--out-dir", dir, "--label", "day"}, "day.csv"},
	} {
		args := append([]string{"plan", "--window", "1m", "--input-tokens", "64", "--max-tokens", "8"}, tc.args...)
		code, out, errOut := execute(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) || strings.Contains(out, "planned") {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s%s", tc.args, code, ExitUsage, tc.want, out, errOut)
		}
	}
	// A trace that is not there is the machine's files, not the flags.
	missing := filepath.Join(dir, "missing.csv")
	if code, _, errOut := execute(t, "plan", "--window", "1m", "--trace", missing); code != ExitRuntime || !strings.Contains(errOut, "--trace: open "+missing) {
		t.Errorf("a missing trace: exit %d, want %d naming it: %s", code, ExitRuntime, errOut)
	}
	if b, _ := os.ReadFile(good); string(b) != "0,1\n60,2\n" {
		t.Errorf("the trace was changed: %q", b)
	}
}
