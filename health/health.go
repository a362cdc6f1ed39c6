// Package health is the client's account of itself: how late its timers
// wake, how much CPU it burns and how long its garbage collector pauses, so a
// saturated client is never mistaken for a slow server.
package health

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// DefaultInterval is how often the monitor wakes.
const DefaultInterval = 5 * time.Millisecond

// Thresholds. Above the "noisy" ones the client's own jitter is reported
// next to the figures (on a shared VM, timer lateness of a few ms at p99
// is common even when idle); above the "limited" ones the client, not the
// server, limited the figures, and sweeps leave such a level out of the
// knees.
const (
	NoisyTimerLagP99       = 5 * time.Millisecond
	NoisySendLatenessP99   = 5 * time.Millisecond
	LimitedTimerLagP99     = 20 * time.Millisecond
	LimitedSendLatenessP99 = 20 * time.Millisecond
	LimitedCPUShare        = 0.90
	// A client whose timers were late while it used little of the
	// machine, on a machine that was busy or whose hypervisor took its
	// time, was starved by its host, not limited by itself.
	StarvedHostBusy   = 0.90
	StarvedHostSteal  = 0.10
	StarvedClientBusy = 0.50
)

// Verdicts.
const (
	Healthy       = "healthy"
	Noisy         = "noisy"
	ClientLimited = "client-limited"
	HostStarved   = "host-starved"
)

// Monitor samples the client's timer lateness in the background.
type Monitor struct {
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	lag      *hdrhistogram.Histogram
	started  time.Time
	cpu0     time.Duration
	gc0      debug.GCStats
	host0    hostCPU
	// ticks is the run's timeline, TickWidth a tick, for Span.
	ticks []tick
}

// Start begins monitoring; Stop ends it and returns the report.
func Start(interval time.Duration) *Monitor {
	if interval <= 0 {
		interval = DefaultInterval
	}
	m := &Monitor{
		interval: interval,
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		lag:      hdrhistogram.New(1, 60_000_000, 3),
		started:  time.Now(),
		cpu0:     processCPU(),
		host0:    readHostCPU(),
	}
	debug.ReadGCStats(&m.gc0)
	go m.loop()
	return m
}

// loop wakes at absolute ticks and records how late each wake-up was.
func (m *Monitor) loop() {
	defer close(m.done)
	next := time.Now().Add(m.interval)
	t := time.NewTimer(m.interval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-t.C:
			lag := time.Since(next)
			if lag < 0 {
				lag = 0
			}
			m.mu.Lock()
			_ = m.lag.RecordValue(min(lag.Microseconds(), 60_000_000))
			m.record(now, lag)
			m.mu.Unlock()
			next = next.Add(m.interval)
			if next.Before(now) {
				next = now.Add(m.interval)
			}
			t.Reset(time.Until(next))
		}
	}
}

// Report is what the monitor saw.
type Report struct {
	TimerLagP50 time.Duration
	TimerLagP99 time.Duration
	TimerLagMax time.Duration
	// CPUShare is the process's CPU time over wall time and cores: 1 means
	// every core was busy with this process.
	CPUShare float64
	// CPU is the process's user plus system CPU time over the report.
	CPU     time.Duration
	GCPause time.Duration
	NumGC   int64
	Wall    time.Duration
	Samples int64
	// HostBusy and HostSteal are the shares of the whole machine's CPU
	// that was busy (any process) and that its hypervisor took, when
	// /proc/stat says (HostKnown).
	HostBusy, HostSteal float64
	HostKnown           bool
}

// Snapshot returns the report so far without stopping.
func (m *Monitor) Snapshot() Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	wall := time.Since(m.started)
	var gc debug.GCStats
	debug.ReadGCStats(&gc)
	r := Report{
		TimerLagP50: time.Duration(m.lag.ValueAtPercentile(50)) * time.Microsecond,
		TimerLagP99: time.Duration(m.lag.ValueAtPercentile(99)) * time.Microsecond,
		TimerLagMax: time.Duration(m.lag.Max()) * time.Microsecond,
		GCPause:     gc.PauseTotal - m.gc0.PauseTotal,
		NumGC:       gc.NumGC - m.gc0.NumGC,
		Wall:        wall,
		Samples:     m.lag.TotalCount(),
	}
	r.CPU = processCPU() - m.cpu0
	r.HostBusy, r.HostSteal, r.HostKnown = m.host0.shares(readHostCPU())
	if wall > 0 {
		r.CPUShare = float64(r.CPU) / float64(wall) / float64(runtime.NumCPU())
	}
	return r
}

// Stop ends monitoring and returns the final report.
func (m *Monitor) Stop() Report {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	m.closeTicks()
	m.mu.Unlock()
	return m.Snapshot()
}

// processCPU is the user plus system CPU time of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Sends describes how well the dispatcher kept to the schedule.
type Sends struct {
	Total       int64
	Late        int64
	LatenessP99 time.Duration
}

// Verdict decides whether the client limited the figures, and why.
func Verdict(r Report, s Sends) (verdict string, reasons []string) {
	verdict = Healthy
	worse := func(v string) {
		if v == ClientLimited || verdict == Healthy {
			verdict = v
		}
	}
	switch {
	case r.TimerLagP99 > LimitedTimerLagP99:
		worse(ClientLimited)
		reasons = append(reasons, fmt.Sprintf("timer lateness p99 %.1f ms exceeds %.0f ms", ms(r.TimerLagP99), ms(LimitedTimerLagP99)))
	case r.TimerLagP99 > NoisyTimerLagP99:
		worse(Noisy)
		reasons = append(reasons, fmt.Sprintf("timer lateness p99 %.1f ms exceeds %.0f ms: latencies carry that much client jitter", ms(r.TimerLagP99), ms(NoisyTimerLagP99)))
	}
	switch {
	case s.LatenessP99 > LimitedSendLatenessP99:
		worse(ClientLimited)
		reasons = append(reasons, fmt.Sprintf("sends fell behind the schedule (lateness p99 %.1f ms; %d of %d over 1 ms)", ms(s.LatenessP99), s.Late, s.Total))
	case s.LatenessP99 > NoisySendLatenessP99:
		worse(Noisy)
		reasons = append(reasons, fmt.Sprintf("sends ran late of the schedule (lateness p99 %.1f ms)", ms(s.LatenessP99)))
	}
	if r.CPUShare > LimitedCPUShare {
		worse(ClientLimited)
		reasons = append(reasons, fmt.Sprintf("client CPU at %.0f%% of the machine", 100*r.CPUShare))
	}
	if verdict == ClientLimited && r.CPUShare < StarvedClientBusy && r.HostKnown && (r.HostBusy > StarvedHostBusy || r.HostSteal > StarvedHostSteal) {
		// Late with little work of its own: the machine was taken.
		verdict = HostStarved
		reasons = append(reasons, fmt.Sprintf("the host was starved, not the client: the machine's CPU was %.0f%% busy (%.0f%% taken by its hypervisor) "+
			"while knee used %.0f%% of it", 100*r.HostBusy, 100*r.HostSteal, 100*r.CPUShare))
	}
	return verdict, reasons
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
