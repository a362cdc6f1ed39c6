package health

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestSpan books wake-ups into the timeline by hand and reads stretches
// of it: each stretch counts its own wake-ups, to the tick, and a second
// of late timers shows in its slice and not in the others.
func TestSpan(t *testing.T) {
	m := &Monitor{started: time.Unix(1000, 0), cpu0: processCPU(), host0: readHostCPU()}
	at := func(d time.Duration) time.Time { return m.started.Add(d) }
	// 200 wake-ups a second for 5 s, 1 ms late; in the second second, 5
	// of them 30 ms late and 10 more 8 ms late.
	for i := range 1000 {
		d := time.Duration(i) * 5 * time.Millisecond
		lag := time.Millisecond
		if k := i - 200; k >= 0 && k < 200 {
			switch {
			case k%40 == 0:
				lag = 30 * time.Millisecond
			case k%20 == 10:
				lag = 8 * time.Millisecond
			}
		}
		m.record(at(d), lag)
	}
	for _, c := range []struct {
		from, to      time.Duration
		samples       int64
		noisy, limits float64
		verdicts      []string
	}{
		{0, time.Second, 200, 0, 0, []string{Healthy}},
		{time.Second, 2 * time.Second, 200, 15.0 / 200, 5.0 / 200, []string{ClientLimited, HostStarved}},
		{2 * time.Second, 5 * time.Second, 600, 0, 0, []string{Healthy}},
		// A stretch across ticks reads the tick it holds most of:
		// 1.0–1.1 s, then 1.1–1.2 s.
		// (Twenty wake-ups are too few to judge.)
		{950 * time.Millisecond, 1050 * time.Millisecond, 20, 0.1, 0.05, []string{""}},
		{1050 * time.Millisecond, 1150 * time.Millisecond, 20, 0.05, 0, []string{""}},
		{1050 * time.Millisecond, 1080 * time.Millisecond, 0, 0, 0, []string{""}},
		{6 * time.Second, 7 * time.Second, 0, 0, 0, []string{""}},
	} {
		s := m.Span(at(c.from), at(c.to))
		v, reasons := SpanVerdict(s)
		if s.Samples != c.samples || s.OverNoisy != c.noisy || s.OverLimited != c.limits {
			t.Errorf("[%v, %v): %d wake-ups, %.4f noisy, %.4f limited; want %d, %.4f, %.4f", c.from, c.to, s.Samples, s.OverNoisy, s.OverLimited, c.samples, c.noisy, c.limits)
		}
		ok := false
		for _, w := range c.verdicts {
			ok = ok || v == w
		}
		// The machine's own CPU (read live) may make a late span
		// host-starved rather than client-limited; never healthy.
		if !ok {
			t.Errorf("[%v, %v): verdict %q (%v), want one of %q", c.from, c.to, v, reasons, c.verdicts)
		}
	}
	if s := m.Span(at(time.Second), at(2*time.Second)); s.MaxLag != 30*time.Millisecond {
		t.Errorf("max lag %v, want 30ms", s.MaxLag)
	}
}

// TestSpanOfALiveMonitor: a real monitor's timeline covers its run, one
// tick every TickWidth, and its CPU share is a share.
func TestSpanOfALiveMonitor(t *testing.T) {
	// On a bubble's clock: the monitor's own accounting, not the host's timers.
	synctest.Test(t, testSpanOfALiveMonitor)
}

func testSpanOfALiveMonitor(t *testing.T) {
	m := Start(DefaultInterval)
	time.Sleep(350 * time.Millisecond)
	m.Stop()
	s := m.Span(m.started, m.started.Add(300*time.Millisecond))
	if s.Samples == 0 || s.CPUShare < 0 || s.CPUShare > 1 {
		t.Errorf("300 ms of a live monitor: %d wake-ups, CPU share %v", s.Samples, s.CPUShare)
	}
}

// BenchmarkTickClose is what the timeline costs each 100 ms tick: the
// process's and the machine's CPU clocks read once (CHANGELOG.md).
func BenchmarkTickClose(b *testing.B) {
	for b.Loop() {
		_, _ = processCPU(), readHostCPU()
	}
}
