package driver

import (
	"context"
	"time"

	"github.com/kneebench/knee/workload"
)

// RunRequests runs a level of requests: the warm-up (unmeasured requests,
// finished before the window), the measured window, and the drain of its
// stragglers. Cancelling ctx stops sending and cuts what is in flight;
// what was measured is kept.
func (d *Driver) RunRequests(ctx context.Context, lv Requests) (RequestsOutcome, error) {
	var out RequestsOutcome
	load := lv.Load
	if err := load.Validate(); err != nil {
		return out, err
	}
	s, err := newRequestSchedule(load)
	if err != nil {
		return out, err
	}
	warm := load.DefaultWarmup()
	if warm > 0 {
		d.run(ctx, d.newRequests(lv, s, warm, 0, false, d.clock.Now(), 0))
		if err := d.warm.err(); err != nil && ctx.Err() == nil {
			// The window would only measure refusals.
			return out, err
		}
	}
	ramp := load.Ramp.Duration
	base, fixedBase := d.clock.Now()+ramp, false
	if wall := d.clock.Wall(); !lv.StartAt.IsZero() && !wall.IsZero() && ctx.Err() == nil {
		// The ramp ends when the shards' window starts.
		base, fixedBase = lv.StartAt.Sub(wall), true
		for d.clock.Now() < base-ramp && ctx.Err() == nil {
			d.clock.Wait(ctx, base-ramp, false)
		}
		out.Late = max(d.clock.Now()-(base-ramp), 0)
	}
	ramping, rampSent, err := d.rampUp(ctx, lv, s, base)
	if err != nil {
		return out, err
	}
	if ctx.Err() != nil {
		if ramping != nil {
			// Its requests were cut with the level: wait for their ends.
			ramping.handover = false
			d.run(ctx, ramping)
		}
		return out, nil
	}
	out.Window = d.runWindow(ctx, lv, s, windowStart{base: base, fixedBase: fixedBase, warm: warm, ramping: ramping, rampSent: rampSent})
	return out, nil
}

// newRequestSchedule is the level's arrivals: drawn at its rate, or its
// trace's.
func newRequestSchedule(load Load) (*requestSchedule, error) {
	s := &requestSchedule{}
	if load.Rate > 0 {
		a, err := workload.NewArrivals(load.Rate, load.Burstiness, load.Seed)
		if err != nil {
			return nil, err
		}
		s.arrivals = a
	}
	if load.Trace != nil {
		s.trace = workload.NewTraceArrivals(load.Trace)
	}
	return s, nil
}

// rampUp runs the ramp that ends at base, when there is one, and waits
// for base: its last arrival may come well before its end, and the
// window starts at the end all the same. It returns the ramp's requests
// (handed over to the window) and how many it sent.
func (d *Driver) rampUp(ctx context.Context, lv Requests, s *requestSchedule, base time.Duration) (*requests, int64, error) {
	ramp := lv.Load.Ramp.Duration
	if ramp <= 0 || ctx.Err() != nil {
		return nil, 0, nil
	}
	sent := d.counts.Sent.Load()
	ramping, err := d.runRamp(ctx, lv, s, base-ramp)
	if err != nil {
		return nil, 0, err
	}
	rampSent := d.counts.Sent.Load() - sent
	for d.clock.Now() < base && ctx.Err() == nil {
		d.clock.Wait(ctx, base, false)
	}
	return ramping, rampSent, nil
}

// windowStart is how the measured window starts: its schedule's base (fixed
// when the shards share a start), the warm-up's size and the ramp's
// requests still running.
type windowStart struct {
	base      time.Duration
	fixedBase bool
	warm      int
	ramping   *requests
	rampSent  int64
}

// runWindow runs the measured window and returns its figures.
func (d *Driver) runWindow(ctx context.Context, lv Requests, s *requestSchedule, wn windowStart) Window {
	load, base := lv.Load, wn.base
	if lv.OnWindowStart != nil {
		lv.OnWindowStart(ctx)
	}
	start := d.clock.Now()
	if !(load.Rate > 0 && wn.fixedBase) {
		base = start
	} else {
		// The schedule's window started at StartAt, however late this
		// driver came to it: its arrivals are all in it.
		start = min(start, base)
	}
	if lv.OnBase != nil {
		lv.OnBase(start)
	}
	p := d.newRequests(lv, s, load.Requests, load.Duration, true, base, wn.warm)
	var rampRunning int64
	if wn.ramping != nil {
		d.mu.Lock()
		rampRunning = int64(wn.ramping.inflight)
		p.adopt(wn.ramping)
		d.level = p
		d.mu.Unlock()
	}
	d.run(ctx, p)
	w := p.window()
	w.Start, w.End = start, d.clock.Now()
	w.Warmup = load.Shard.Share(wn.warm)
	w.RampSent, w.RampRunning = wn.rampSent, rampRunning
	if lv.OnWindowEnd != nil && ctx.Err() == nil {
		lv.OnWindowEnd(ctx)
	}
	return w
}
