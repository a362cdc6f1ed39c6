// Package quiet is how a test reaches knee's live path — real sockets,
// real processes, the wall clock — rather than a synctest bubble's
// (simulator/simtest), and the one way it does: Live. A test that judges
// live timing asks knee's own verdict on the host it ran on (the
// client's results.Health, the same verdict a sweep uses to leave a
// starved level out of its knees), measures again when the host starved
// it, and skips, naming the figures, only when every try was starved:
// what it asserts when it runs is never weakened. TestEveryLiveTestIsHeld
// lists the tests that reach the live path and holds each to Live.
package quiet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health"
)

// Judgeable reports whether a client health verdict lets a test judge
// live timing: healthy or noisy (jitter of a few ms, said beside the
// figures), or virtual (no wall time at all).
func Judgeable(verdict string) bool {
	return verdict == health.Healthy || verdict == health.Noisy || verdict == "virtual" || verdict == ""
}

// Try is what one measurement's client said of itself. The zero Try is
// judgeable: a try that judges no timing (bytes on the wire, counts)
// returns it.
type Try struct {
	Verdict string
	Reasons []string
}

// TryBudget is the wall time a judgeable try of a live test may take. Live
// tests test the live path with a few seconds of load (three at most);
// rules belong on a virtual clock. A try the host starved is not held to
// it.
var TryBudget = 15 * time.Second

// Live runs measure up to tries times, until the client health a try
// reports lets the test judge its timing, and returns which try that was.
// When every try was starved (or the client limited) it skips t with the
// verdicts and their figures. A judgeable try that took longer than
// TryBudget fails t: it is no longer a test of the live path.
func Live(t testing.TB, tries int, measure func(try int) Try) int {
	t.Helper()
	var said []string
	for i := range tries {
		start := time.Now()
		got := measure(i)
		if Judgeable(got.Verdict) {
			if took := time.Since(start); took > TryBudget {
				t.Errorf("a try of this live test took %s of wall time (budget %s): test the live path with seconds of load, and rules on a virtual clock (simtest.Run)",
					took.Round(time.Millisecond), TryBudget)
			}
			return i
		}
		said = append(said, fmt.Sprintf("try %d: %s (%s)", i+1, got.Verdict, strings.Join(got.Reasons, "; ")))
		t.Logf("knee judged this try's client %s: %s", got.Verdict, strings.Join(got.Reasons, "; "))
	}
	t.Skipf("not a quiet host: knee judged the client of every try unfit to time (%s); the test judges live timing and asserts nothing rather than fail on starvation",
		strings.Join(said, "; "))
	return -1
}

// Wire is Live for a test that judges no timing — bytes on a real socket,
// a process's exit, counts — so one try, never skipped.
func Wire(t testing.TB, f func()) {
	t.Helper()
	Live(t, 1, func(int) Try { f(); return Try{} })
}

// Host watches the machine for d with knee's health monitor and returns
// its verdict of a client that did nothing but wait on timers.
func Host(d time.Duration) Try {
	m := health.Start(health.DefaultInterval)
	time.Sleep(d)
	v, reasons := health.Verdict(m.Stop(), health.Sends{})
	return Try{Verdict: v, Reasons: reasons}
}

// OthersBusy is the share of the machine other processes must take
// while a test's timers run late for During to call the host starved: on
// two cores, most of one core.
const OthersBusy = 0.35

// During runs f with knee's health monitor watching, and says whether
// the machine let f's own timing be judged: when other processes took
// more than OthersBusy of it and the monitor's timers ran late, the host
// was starved. A late timer in a process that f itself keeps busy (a
// calibration on every core) is f's doing, not the host's, and is judged.
func During(f func()) Try {
	m := health.Start(health.DefaultInterval)
	f()
	r := m.Stop()
	others := r.HostBusy - r.CPUShare
	if r.HostKnown && others > OthersBusy && r.TimerLagP99 > health.NoisyTimerLagP99 {
		return Try{Verdict: health.HostStarved, Reasons: []string{fmt.Sprintf("other processes took %.0f%% of the machine and timers woke %.1f ms late at p99",
			100*others, float64(r.TimerLagP99)/1e6)}}
	}
	return Try{Verdict: health.Healthy}
}
