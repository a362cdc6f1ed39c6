package driver

import (
	"context"
	"time"

	"github.com/kneebench/knee/workload"
)

// rampSeed parts the ramp's arrivals from the window's: the window keeps
// the schedule it would have without a ramp.
const rampSeed = 0x72616d70 // "ramp"

// runRamp sends the ramp into lv's rate from base until its end,
// unmeasured, and returns its phase with its requests still running: the
// driver keeps booking their ends on it until the window adopts them.
func (d *Driver) runRamp(ctx context.Context, lv Requests, s *requestSchedule, base time.Duration) (*requests, error) {
	l := lv.Load
	a, err := workload.NewRampArrivals(l.Ramp, l.Rate, l.Burstiness, l.Seed^rampSeed)
	if err != nil {
		return nil, err
	}
	// The ramp's requests take the indices after the warm-up's, as the
	// window's do: they are sent as warm-up requests (their own prompts),
	// so sharing an index shares no prompt.
	rs := &requestSchedule{arrivals: a, drawn: s.drawn}
	p := d.newRequests(lv, rs, 0, l.Ramp.Duration, false, base, 0)
	p.handover = true
	d.run(ctx, p)
	return p, nil
}

// adopt takes over the ramp r's requests still running: they hold their
// concurrency slots and their ends are booked here, so the window starts
// on a server as loaded as the ramp left it and the level drains them
// too. Called with the driver's lock held.
func (p *requests) adopt(r *requests) {
	p.inflight += r.inflight
	r.inflight = 0
	if p.slots >= 0 && r.slots >= 0 {
		p.slots = r.slots
	}
	p.releases, r.releases = r.releases, timeQueue[struct{}]{}
	p.lastFree = max(p.lastFree, r.lastFree)
}
