package bench

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// live is a level run against a real server: the driver on the wall
// clock, sending with the HTTP client.
type live struct {
	client *transport.Client
	clock  *driver.WallClock
	sender *liveSender
	driver *driver.Driver
	sum    *summary.Summary
}

// newLive sets up a level's driver: record times from start, measured
// records summarised as level says, spread over a lock per processor's
// worth of concurrent ends.
func newLive(c *transport.Client, start time.Time, records *record.Writer, level summary.Level) *live {
	c.SetStart(start)
	level.Prefixes = workload.NewPrefixTracker()
	l := &live{client: c, clock: driver.NewWallClock(start), sender: &liveSender{client: c, idle: make(chan *driver.Flight)},
		sum: summary.New(level, 4*runtime.GOMAXPROCS(0))}
	l.driver = driver.New(driver.Options{Clock: l.clock, Sender: l.sender, Records: records, Measured: l.sum.Add, Prefixes: level.Prefixes})
	return l
}

// close ends the sender's goroutines.
func (l *live) close() { l.sender.close() }

// connections is what happened to the client's connections.
func (l *live) connections() *results.Connections {
	opened, stale, resent := l.client.ConnStats()
	return &results.Connections{Opened: opened, StaleClosed: stale, Resent: resent}
}

// liveSender sends the driver's requests with the HTTP client, each on a
// goroutine of its own. Senders are kept and reused rather than started
// per request: a fresh goroutine regrows its stack through the HTTP
// client on every request, which cost 8% of the client's CPU at 10,000
// requests/s.
type liveSender struct {
	client *transport.Client
	idle   chan *driver.Flight
	wg     sync.WaitGroup
}

// Send implements driver.Sender.
func (s *liveSender) Send(ctx context.Context, f *driver.Flight) {
	select {
	case s.idle <- f:
		// Let the sender write its request on this thread now.
		// Otherwise it waits in this processor's queue while the
		// dispatcher sleeps in the kernel, and the runtime wakes another
		// thread to take both: a fifth more CPU at 5,000 arrivals a
		// second (docs/performance.md).
		runtime.Gosched()
	default:
		// Every sender is busy: start another, so no request ever waits
		// for a sender.
		s.wg.Add(1)
		go s.serve(ctx, f)
	}
}

// serve sends f, then every request handed to it, until closed.
func (s *liveSender) serve(ctx context.Context, f *driver.Flight) {
	defer s.wg.Done()
	for ok := true; ok; f, ok = <-s.idle {
		s.client.DoRetry(ctx, f.Request(), &f.Rec, f.KeepText)
		f.Done()
	}
}

// Abort implements driver.Sender: every connection fails at once.
func (s *liveSender) Abort() { s.client.Abort() }

// close ends the idle senders.
func (s *liveSender) close() {
	close(s.idle)
	s.wg.Wait()
}
