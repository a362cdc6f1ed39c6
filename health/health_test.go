package health

import (
	"strings"
	"testing"
	"time"
)

func TestVerdict(t *testing.T) {
	cases := []struct {
		name    string
		r       Report
		s       Sends
		healthy bool
		reason  string
	}{
		{"idle client", Report{TimerLagP99: time.Millisecond, CPUShare: 0.1}, Sends{Total: 100}, true, ""},
		{"late timers", Report{TimerLagP99: 9 * time.Millisecond}, Sends{}, false, "timer lateness"},
		{"late sends", Report{}, Sends{Total: 100, LatenessP99: 12 * time.Millisecond}, false, "sends ran late"},
		{"many late sends", Report{}, Sends{Total: 100, Late: 10, LatenessP99: time.Millisecond}, false, "10 of 100"},
		{"saturated CPU", Report{CPUShare: 0.97}, Sends{}, false, "CPU at 97%"},
	}
	for _, tc := range cases {
		ok, reasons := Verdict(tc.r, tc.s)
		if ok != tc.healthy || (tc.reason != "" && !strings.Contains(strings.Join(reasons, ";"), tc.reason)) {
			t.Errorf("%s: healthy=%v reasons=%q, want %v with %q", tc.name, ok, reasons, tc.healthy, tc.reason)
		}
	}
}

// TestMonitorSeesABlockedLoop: while the monitor runs, a goroutine that
// hogs every P cannot delay it on a multi-core machine, but the monitor
// must at least wake and record samples at its interval.
func TestMonitorRecords(t *testing.T) {
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
