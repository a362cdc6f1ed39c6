package driver

import (
	"time"

	"github.com/kneebench/knee/workload"
)

// Closed-loop calls: AIPerf's and GuideLLM's --concurrency over a
// multi-turn file. Each of N slots holds one session at a time, sends its
// turns in order (each after its recorded gap), and takes the next
// session as the last turn ends, after the turnaround, as a closed loop
// of requests reissues. The window (a duration or a count of calls) bounds
// when slots take new sessions; those taken run to their end, within the
// drain.

// arrive sets how calls arrive: drawn from the open loop's schedule, or,
// closed loop, as this shard's slots free.
func (p *calls) arrive() error {
	l := p.load
	if l.Concurrency > 0 {
		p.closed = newClosedCalls(l, p.base)
		// Each shard counts its own calls: there is no one schedule.
		p.count = NewArrivalCount(p.base, l.Duration, Shard{}, 0)
		return nil
	}
	arrivals, err := workload.NewArrivals(l.Rate, 1, l.Seed)
	if err != nil {
		return err
	}
	p.sched = arrivals.Phase(l.Calls, l.Duration)
	p.count = NewArrivalCount(p.base, l.Duration, l.Shard, 0)
	if c := l.MaxConcurrentCalls; c > 0 {
		p.cap = max(l.Shard.Share(c), 1)
	}
	p.draw()
	return nil
}

// closedCalls is a closed loop's state: its slots free at their times,
// the calls it may still start, and when it stops starting them.
type closedCalls struct {
	slots timeQueue[struct{}]
	// left is how many calls this shard may still start (-1: no count).
	left int
	end  time.Duration
}

func newClosedCalls(l CallLoad, base time.Duration) *closedCalls {
	c := &closedCalls{left: -1, end: Never}
	if l.Calls > 0 {
		c.left = l.Shard.Share(l.Calls)
	}
	if l.Duration > 0 {
		c.end = base + l.Duration
	}
	for range l.Shard.Share(l.Concurrency) {
		c.slots.add(base, struct{}{})
	}
	return c
}

// startClosed starts a call on every slot free by now, until the window
// ends; then the arrivals end, and a freed slot stays empty.
func (p *calls) startClosed(now time.Duration) {
	c := p.closed
	for !p.arrivalsEnded {
		if now >= c.end || c.left == 0 || c.slots.len() == 0 && p.inProgress == 0 {
			p.endArrivals(min(now, c.end))
			return
		}
		_, due, ok := c.slots.popDue(now)
		if !ok {
			return
		}
		// This shard's j-th call is the run's call Global(0, j), as the
		// open loop's would be.
		k := p.load.Shard.Global(0, p.count.Drawn())
		p.count.Add(due-p.base, int64(p.src.MeasuredTurns(k)))
		if c.left > 0 {
			c.left--
		}
		p.start(k, due, now)
	}
}
