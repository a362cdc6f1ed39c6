package bench

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kneebench/knee/bench/driver"
)

// closedLoop runs Concurrency workers, each sending its next request as soon
// as its previous one ends. The drain starts when the window's time is up,
// or when its last request has been issued.
func (r *runner) closedLoop(ctx context.Context, n int, d time.Duration, measured bool, drain func(time.Duration) func()) {
	var issued atomic.Int64
	start := r.client.Now()
	var mu sync.Mutex
	stopDrain := func() {}
	startDrain := sync.OnceFunc(func() {
		mu.Lock()
		stopDrain = drain(0)
		mu.Unlock()
	})
	if d > 0 {
		t := time.AfterFunc(d, startDrain)
		defer t.Stop()
	}
	var wg sync.WaitGroup
	shard := r.opts.Load.Shard
	n = shard.Share(n)
	base := r.base
	if !measured {
		base = 0
	}
	for w := 0; w < shard.Share(r.opts.Load.Concurrency); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				j := issued.Add(1) - 1
				if n > 0 && j >= int64(n) {
					startDrain()
					return
				}
				now := r.client.Now()
				if d > 0 && now-start >= d {
					return
				}
				r.one(ctx, shard.Global(base, int(j)), now, 0, false, measured)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	stopDrain()
	mu.Unlock()
}

// openLoop dispatches arrivals at their absolute scheduled times. An
// arrival that finds every --max-concurrency slot busy waits for one, and
// later arrivals queue behind it; the wait is the server's doing, so an
// arrival's lateness is counted from when it was due or when the slot
// ahead of it came free, whichever is later. Arrivals due after the window
// are never sent, and arrivals still waiting for a slot when the window
// closes are counted as unsent.
func (r *runner) openLoop(ctx context.Context, n int, d time.Duration, measured bool, drain func(time.Duration) func(), pr *phaseResult) {
	var slots chan struct{}
	if mc := r.opts.Load.MaxConcurrency; mc > 0 {
		slots = make(chan struct{}, mc)
	}
	var wg sync.WaitGroup
	base := r.client.Now()
	if measured && r.hasWindowBase {
		base = r.windowBase
	}
	shard := r.opts.Load.Shard
	arrivals := r.arrivals
	if measured && r.trace != nil {
		// A trace's line k is the window's arrival k, whatever warmed up.
		arrivals, r.drawn = r.trace, 0
	}
	phase := arrivals.Phase(n, d)
	count := driver.NewArrivalCount(base, d, shard, r.drawn)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var windowEnd <-chan time.Time
	if d > 0 {
		wt := time.NewTimer(base + d - r.client.Now())
		defer wt.Stop()
		windowEnd = wt.C
	}
	// freeAt is when the dispatcher last got a slot it had waited for; the
	// earliest time there is before any wait, as a late shard's first
	// arrivals are due before the run's clock began.
	freeAt := time.Duration(math.MinInt64)
	// Senders are kept and reused rather than started per arrival: a fresh
	// goroutine regrows its stack through the HTTP client on every
	// request, which cost 8% of the client's CPU at 10,000 requests/s.
	idle := make(chan arrival)
	send := func(a arrival) {
		defer wg.Done()
		for {
			r.one(ctx, a.index, a.due, a.lateness, a.waited, measured)
			if slots != nil {
				<-slots
			}
			var ok bool
			if a, ok = <-idle; !ok {
				return
			}
		}
	}
	// next draws the next arrival of the one schedule, every shard's: its
	// offset from the window's start and its index; ok is false once the
	// window's arrivals are all drawn.
	next := func() (time.Duration, int, bool) {
		rel, ok := phase.Next()
		if !ok {
			return 0, 0, false
		}
		k, _ := count.Add(rel, 0)
		r.drawn = k + 1
		return rel, k, true
	}
dispatch:
	for ctx.Err() == nil {
		rel, k, ok := next()
		if !ok {
			break
		}
		if !shard.Mine(k) {
			continue
		}
		due := base + rel
		if !driver.SleepUntil(ctx, r.client.Now, due, timer) {
			continue
		}
		waited := false
		if slots != nil {
			select {
			case slots <- struct{}{}:
			default:
				waited = true
				select {
				case slots <- struct{}{}:
					freeAt = r.client.Now()
				case <-ctx.Done():
					continue
				case <-windowEnd:
					// This arrival and every later one due in the window
					// never got a slot.
					pr.unsent = 1
					for {
						_, k, ok := next()
						if !ok {
							break dispatch
						}
						if shard.Mine(k) {
							pr.unsent++
						}
					}
				}
			}
		}
		lateness := r.client.Now() - max(due, freeAt)
		a := arrival{index: k, due: due, lateness: max(lateness, 0), waited: waited}
		select {
		case idle <- a:
			// Let the sender write its request on this thread now.
			// Otherwise it waits in this processor's queue while the
			// dispatcher sleeps in the kernel, and the runtime wakes
			// another thread to take both: a fifth more CPU at 5,000
			// arrivals a second (docs/performance.md).
			runtime.Gosched()
		default:
			// Every sender is busy: start another, so no arrival ever
			// waits for a sender (only for a --max-concurrency slot,
			// which is measured).
			wg.Add(1)
			go send(a)
		}
	}
	close(idle)
	var end time.Duration
	if d > 0 {
		end = base + d
	}
	stopDrain := drain(end)
	wg.Wait()
	stopDrain()
	w := count.Window()
	pr.schedStart, pr.schedEnd, pr.arrivals, pr.inWindow, pr.offered = w.SchedStart, w.SchedEnd, w.Arrivals, w.InWindow, w.Offered
}

// arrival is one scheduled request handed to a sender.
type arrival struct {
	index         int
	due, lateness time.Duration
	waited        bool
}
