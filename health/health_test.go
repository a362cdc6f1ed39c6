package health

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestVerdict(t *testing.T) {
	cases := []struct {
		name    string
		r       Report
		s       Sends
		verdict string
		reason  string
	}{
		{"idle client", Report{TimerLagP99: time.Millisecond, CPUShare: 0.1}, Sends{Total: 100}, Healthy, ""},
		{"jittery timers", Report{TimerLagP99: 9 * time.Millisecond}, Sends{}, Noisy, "timer lateness p99 9.0 ms exceeds 5 ms"},
		{"late timers", Report{TimerLagP99: 30 * time.Millisecond}, Sends{}, ClientLimited, "exceeds 20 ms"},
		{"late sends", Report{}, Sends{Total: 100, Late: 40, LatenessP99: 25 * time.Millisecond}, ClientLimited, "sends fell behind"},
		{"slightly late sends", Report{}, Sends{Total: 100, Late: 10, LatenessP99: 7 * time.Millisecond}, Noisy, "sends ran late"},
		{"saturated CPU", Report{CPUShare: 0.97, TimerLagP99: 6 * time.Millisecond}, Sends{}, ClientLimited, "CPU at 97%"},
	}
	for _, tc := range cases {
		v, reasons := Verdict(tc.r, tc.s)
		if v != tc.verdict || (tc.reason != "" && !strings.Contains(strings.Join(reasons, ";"), tc.reason)) {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, v, reasons, tc.verdict, tc.reason)
		}
	}
}

// TestMonitorSeesABlockedLoop: while the monitor runs, a goroutine that
// hogs every P cannot delay it on a multi-core machine, but the monitor
// must at least wake and record samples at its interval.
func TestMonitorRecords(t *testing.T) {
	// On a bubble's clock: the monitor's own accounting, not the host's timers.
	synctest.Test(t, testMonitorRecords)
}

func testMonitorRecords(t *testing.T) {
	m := Start(2 * time.Millisecond)
	time.Sleep(60 * time.Millisecond)
	r := m.Stop()
	if r.Samples < 10 {
		t.Errorf("%d samples in 60 ms at a 2 ms interval, want at least 10", r.Samples)
	}
	if r.TimerLagMax < r.TimerLagP50 || r.Wall < 60*time.Millisecond {
		t.Errorf("inconsistent report %+v", r)
	}
}
