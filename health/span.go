package health

import (
	"fmt"
	"runtime"
	"time"
)

// TickWidth is the wall time one tick of the monitor's timeline covers:
// a span's figures are exact to it (time slices are multiples of it).
const TickWidth = 100 * time.Millisecond

// tick is the monitor's account of one TickWidth of wall time: its
// wake-ups, how many were late past the noisy and the limited bounds,
// the latest, and the process's and the machine's CPU clocks read as
// the tick closed. Kept small: 72 bytes, about 2.6 MB an hour.
type tick struct {
	samples, overNoisy, overLimited uint32
	maxLag                          time.Duration
	cpu                             time.Duration
	host                            hostCPU
	closed                          bool
}

// record books a wake-up lag into the timeline at now, closing the
// ticks it has passed. Called with the monitor's lock held.
func (m *Monitor) record(now time.Time, lag time.Duration) {
	i := int(now.Sub(m.started) / TickWidth)
	if i >= len(m.ticks) {
		// Close the ticks passed, on the clocks as read now: a tick
		// the timer slept through shares its CPU with the next.
		cpu, host := processCPU(), readHostCPU()
		for j := range m.ticks {
			if t := &m.ticks[j]; !t.closed {
				t.cpu, t.host, t.closed = cpu, host, true
			}
		}
		for len(m.ticks) <= i {
			m.ticks = append(m.ticks, tick{cpu: cpu, host: host, closed: len(m.ticks) < i})
		}
	}
	t := &m.ticks[i]
	t.samples++
	if lag > NoisyTimerLagP99 {
		t.overNoisy++
	}
	if lag > LimitedTimerLagP99 {
		t.overLimited++
	}
	t.maxLag = max(t.maxLag, lag)
}

// closeTicks closes the ticks still open on the clocks as read now.
// Called with the monitor's lock held, at its stop.
func (m *Monitor) closeTicks() {
	cpu, host := processCPU(), readHostCPU()
	for j := range m.ticks {
		if t := &m.ticks[j]; !t.closed {
			t.cpu, t.host, t.closed = cpu, host, true
		}
	}
}

// Span is the monitor's account of a stretch of its run, read from the
// ticks the stretch covers.
type Span struct {
	Samples int64
	// OverNoisy and OverLimited are the shares of wake-ups later than
	// NoisyTimerLagP99 and LimitedTimerLagP99: past 1%, the span's timer
	// lag p99 is past that bound.
	OverNoisy, OverLimited float64
	MaxLag                 time.Duration
	CPUShare               float64
	HostBusy, HostSteal    float64
	HostKnown              bool
}

// Span reads the stretch [from, to) of the monitor's run, to the nearest
// tick; while the monitor runs, the tick not yet closed counts its
// wake-ups but no CPU. A stretch the monitor did not see is empty.
func (m *Monitor) Span(from, to time.Time) Span {
	m.mu.Lock()
	defer m.mu.Unlock()
	// A tick belongs to the stretch that holds most of it, so that
	// stretches side by side share none.
	i0 := max(int((from.Sub(m.started)+TickWidth/2)/TickWidth), 0)
	i1 := min(int((to.Sub(m.started)+TickWidth/2)/TickWidth), len(m.ticks))
	var s Span
	if i0 >= i1 {
		return s
	}
	var over5, over20 int64
	for _, t := range m.ticks[i0:i1] {
		s.Samples += int64(t.samples)
		over5 += int64(t.overNoisy)
		over20 += int64(t.overLimited)
		s.MaxLag = max(s.MaxLag, t.maxLag)
	}
	if s.Samples > 0 {
		s.OverNoisy, s.OverLimited = float64(over5)/float64(s.Samples), float64(over20)/float64(s.Samples)
	}
	cpu0, host0 := m.cpu0, m.host0
	if i0 > 0 {
		cpu0, host0 = m.ticks[i0-1].cpu, m.ticks[i0-1].host
	}
	last := m.ticks[i1-1]
	if last.closed {
		wall := time.Duration(i1-i0) * TickWidth
		s.CPUShare = float64(last.cpu-cpu0) / float64(wall) / float64(runtime.NumCPU())
		s.HostBusy, s.HostSteal, s.HostKnown = host0.shares(last.host)
	}
	return s
}

// MinSpanSamples is the fewest wake-ups a span is judged on: below a
// hundred, its p99 is its worst wake-up, and one late timer in a
// fraction of a second would call it noisy.
const MinSpanSamples = 100

// SpanVerdict judges a span by the rules Verdict judges a whole level
// by, its timer lag by the shares past the bounds (a p99 past a bound is
// more than 1% of wake-ups past it); a span has no send lateness of its
// own here. A span of fewer than MinSpanSamples wake-ups is not judged
// ("").
func SpanVerdict(s Span) (verdict string, reasons []string) {
	verdict = Healthy
	switch {
	case s.Samples < MinSpanSamples:
		return "", nil
	case s.OverLimited > 0.01:
		verdict = ClientLimited
		reasons = append(reasons, fmt.Sprintf("%.1f%% of timer wake-ups over %.0f ms late (max %.1f ms)", 100*s.OverLimited, ms(LimitedTimerLagP99), ms(s.MaxLag)))
	case s.OverNoisy > 0.01:
		verdict = Noisy
		reasons = append(reasons, fmt.Sprintf("%.1f%% of timer wake-ups over %.0f ms late (max %.1f ms)", 100*s.OverNoisy, ms(NoisyTimerLagP99), ms(s.MaxLag)))
	}
	if s.CPUShare > LimitedCPUShare {
		verdict = ClientLimited
		reasons = append(reasons, fmt.Sprintf("client CPU at %.0f%% of the machine", 100*s.CPUShare))
	}
	if verdict == ClientLimited && s.CPUShare < StarvedClientBusy && s.HostKnown && (s.HostBusy > StarvedHostBusy || s.HostSteal > StarvedHostSteal) {
		verdict = HostStarved
		reasons = append(reasons, fmt.Sprintf("the host was starved, not the client: the machine's CPU was %.0f%% busy (%.0f%% taken by its hypervisor) while knee used %.0f%% of it",
			100*s.HostBusy, 100*s.HostSteal, 100*s.CPUShare))
	}
	return verdict, reasons
}
