// Package quiet lets a test that judges live timing ask knee's own
// verdict on the host it runs on, so that a machine too busy to time
// anything skips the test, naming the figures, instead of failing it. A
// test measures, reads the client's health verdict of what it measured
// (results.Health, the same verdict a sweep uses to leave a starved level
// out of its knees), measures again when the host starved it, and skips
// only when every try was starved: what it asserts when it runs is never
// weakened.
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

// Try is what one measurement's client said of itself.
type Try struct {
	Verdict string
	Reasons []string
}

// Retry runs measure up to tries times, until the client health it
// reports lets the test judge its timing, and returns which try that was.
// When every try was starved (or the client limited) it skips t with the
// verdicts and their figures.
func Retry(t testing.TB, tries int, measure func(try int) Try) int {
	t.Helper()
	var said []string
	for i := range tries {
		got := measure(i)
		if Judgeable(got.Verdict) {
			return i
		}
		said = append(said, fmt.Sprintf("try %d: %s (%s)", i+1, got.Verdict, strings.Join(got.Reasons, "; ")))
		t.Logf("knee judged this try's client %s: %s", got.Verdict, strings.Join(got.Reasons, "; "))
	}
	t.Skipf("not a quiet host: knee judged the client of every try unfit to time (%s); the test judges live timing and asserts nothing rather than fail on starvation",
		strings.Join(said, "; "))
	return -1
}

// Host watches the machine for d with knee's health monitor and returns
// its verdict of a client that did nothing but wait on timers.
func Host(d time.Duration) Try {
	m := health.Start(health.DefaultInterval)
	time.Sleep(d)
	v, reasons := health.Verdict(m.Stop(), health.Sends{})
	return Try{Verdict: v, Reasons: reasons}
}

// Need skips t, naming the figures, when a second's watch of the machine
// finds its timers too late to judge live timing on, before a test spends
// a minute measuring what it could not judge.
func Need(t testing.TB) {
	t.Helper()
	if h := Host(time.Second); !Judgeable(h.Verdict) {
		t.Skipf("not a quiet host: knee's health monitor, idle for a second, judged it %s (%s); the test judges live timing",
			h.Verdict, strings.Join(h.Reasons, "; "))
	}
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
