package health

import (
	"testing"
	"time"
)

// TestHostStarvation: late timers with a quiet client on a busy or stolen
// machine are the host's doing; late timers with the client's own CPU
// spent, or on an idle machine, are the client's.
func TestHostStarvation(t *testing.T) {
	late := Report{TimerLagP99: 60 * time.Millisecond, HostKnown: true}
	for _, tc := range []struct {
		name            string
		client, busy, s float64
		known           bool
		want            string
	}{
		{"busy host, quiet client", 0.1, 0.97, 0, true, HostStarved},
		{"stolen host", 0.1, 0.6, 0.3, true, HostStarved},
		{"idle host", 0.1, 0.3, 0, true, ClientLimited},
		{"busy client", 0.95, 0.99, 0, true, ClientLimited},
		{"no /proc/stat", 0.1, 0, 0, false, ClientLimited},
	} {
		r := late
		r.CPUShare, r.HostBusy, r.HostSteal, r.HostKnown = tc.client, tc.busy, tc.s, tc.known
		if got, _ := Verdict(r, Sends{}); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestParseHostCPU reads /proc/stat's cpu line, and nothing else.
func TestParseHostCPU(t *testing.T) {
	a := parseHostCPU([]byte("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n"))
	b := parseHostCPU([]byte("cpu  200 0 100 850 50 0 0 100 0 0\n"))
	busy, steal, ok := a.shares(b)
	if !ok || busy < 0.83 || busy > 0.84 || steal < 0.33 || steal > 0.34 {
		t.Errorf("busy %.3f, steal %.3f (ok %v), want 0.833 and 0.333", busy, steal, ok)
	}
	if parseHostCPU([]byte("intr 1 2 3")).ok || parseHostCPU([]byte("cpu  x y z 1 2 3 4 5")).ok {
		t.Error("a line that is not the cpu total was read")
	}
}
