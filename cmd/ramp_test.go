package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestRampUp: --ramp-up sends its requests before the window, unmeasured
// and counted apart; the window keeps the arrivals it has without a ramp
// (its schedule is its own), live and predicted alike, and both draw the
// same ramp for the same seed.
func TestRampUp(t *testing.T) {
	t.Parallel()
	inBubble(t, testRampUp)
}

func testRampUp(t *testing.T) {
	url := startSim(t, "", "")
	dir := t.TempDir()
	common := []string{"--input-tokens", "32", "--max-tokens", "8", "--seed", "3"}
	run := func(name string, args ...string) results.Run {
		t.Helper()
		path := filepath.Join(dir, name+".json")
		code, out, errOut := execute(t, append(append([]string{"run", "--base-url", url, "--rate", "20", "--duration", "2s", "-o", path}, common...), args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, out, errOut)
		}
		var res results.Run
		if err := readJSON(path, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	plain := run("plain")
	ramped := run("ramped", "--ramp-up", "2s")
	if c := ramped.Config; c.RampUpS != 2 || c.RampUpStrategy != "linear" || plain.Config.RampUpS != 0 {
		t.Errorf("recorded ramp %v s %q (without one: %v s)", c.RampUpS, c.RampUpStrategy, plain.Config.RampUpS)
	}
	// A line from 0 to 20/s over 2 s offers 20 arrivals, and the first
	// comes at once: 21 on average, 9 to 33 at ±2.6σ.
	rq := ramped.Requests
	if rq.Ramp < 9 || rq.Ramp > 33 || rq.RampRunning > rq.Ramp || plain.Requests.Ramp != 0 {
		t.Errorf("ramp sent %d, %d running at the window (without a ramp: %d)", rq.Ramp, rq.RampRunning, plain.Requests.Ramp)
	}
	if rq.Sent != plain.Requests.Sent || ramped.Arrivals.WindowArrivals != plain.Arrivals.WindowArrivals {
		t.Errorf("the window sent %d (%d arrivals) with a ramp, %d (%d) without: a ramp must leave the window's schedule alone",
			rq.Sent, ramped.Arrivals.WindowArrivals, plain.Requests.Sent, plain.Arrivals.WindowArrivals)
	}
	code, out, errOut := execute(t, append([]string{"predict", "--rates", "20", "--step-duration", "2s", "--ramp-up", "2s", "--slice", "500ms",
		"--out-dir", dir, "--label", "predicted"}, common...)...)
	if code != 0 {
		t.Fatalf("predict: exit %d\n%s\n%s", code, out, errOut)
	}
	var predicted results.Sweep
	if err := readJSON(filepath.Join(dir, "predicted.json"), &predicted); err != nil {
		t.Fatal(err)
	}
	if p := predicted.Levels[0].Run; p.Requests.Ramp != rq.Ramp || p.Requests.Sent != rq.Sent {
		t.Errorf("predicted ramp %d and window %d, live %d and %d: the same seed draws the same arrivals", p.Requests.Ramp, p.Requests.Sent, rq.Ramp, rq.Sent)
	}
	// The slices are cut from the window's start, which the ramp put off
	// the tenth-of-a-second grid: every request due in the window falls
	// in a slice of it, none in the drain's.
	var inWindow int64
	for _, sl := range predicted.Levels[0].Run.Slices {
		if sl.StartS >= 2 && sl.Sent > 0 {
			t.Errorf("slice from %v s (after the 2 s window) holds %d requests due", sl.StartS, sl.Sent)
		}
		inWindow += sl.Sent
	}
	if inWindow != predicted.Levels[0].Run.Requests.Sent {
		t.Errorf("the slices hold %d requests due, the window sent %d", inWindow, predicted.Levels[0].Run.Requests.Sent)
	}
}

// TestRampUpRefused: a ramp where there is no rate to raise, or a shape
// that is none, is a usage error before any request.
func TestRampUpRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "2", "--ramp-up", "1s"}, "not --concurrency"},
		{[]string{"--rate", "2", "--ramp-up-strategy", "exponential"}, "give --ramp-up"},
		{[]string{"--rate", "2", "--ramp-up", "1s", "--ramp-up-strategy", "cubic"}, "linear or exponential"},
		{[]string{"--rate", "2", "--ramp-up", "1s", "--ramp-up-from", "NaN"}, "--ramp-up-from"},
		{[]string{"--rate", "2", "--ramp-up", "1s", "--ramp-up-from", "-3"}, "--ramp-up-from"},
		{[]string{"--rate", "2", "--ramp-up", "1s", "--ramp-up-strategy", "exponential", "--ramp-up-from", "0"}, "cannot start from 0"},
		{[]string{"--rate", "2", "--ramp-up", "-1s"}, "negative"},
		{[]string{"--rate", "2", "--ramp-up", "1000h"}, "--ramp-up"},
		{[]string{"--workload", "voice", "--rate", "0.5", "--ramp-up", "1s"}, "calls"},
	} {
		code, _, errOut := execute(t, append([]string{"run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want a usage error naming %q", c.args, code, errOut, c.want)
		}
	}
}
