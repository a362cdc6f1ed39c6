package sched

import "math"

// link is one decode replica's link for incoming KV: its rate shared
// equally by the transfers on it at once (processor sharing), so a
// transfer's end moves whenever one starts or ends.
type link struct {
	rate   float64 // bytes a second
	last   float64 // when the transfers' bytes left were last brought up to date
	xfers  []xfer
	finish []int64
}

type xfer struct {
	id   int64
	left float64
}

// update brings the bytes left up to t.
func (l *link) update(t float64) {
	if len(l.xfers) > 0 && t > l.last {
		sent := (t - l.last) * l.rate / float64(len(l.xfers))
		for i := range l.xfers {
			l.xfers[i].left -= sent
		}
	}
	l.last = math.Max(l.last, t)
}

// start puts bytes of request id on the link at t.
func (l *link) start(id int64, bytes, t float64) {
	l.update(t)
	l.xfers = append(l.xfers, xfer{id: id, left: bytes})
}

// nextDone is when the transfer with the fewest bytes left ends (+Inf:
// none on the link).
func (l *link) nextDone() float64 {
	if len(l.xfers) == 0 {
		return math.Inf(1)
	}
	least := l.xfers[0].left
	for _, x := range l.xfers[1:] {
		least = math.Min(least, x.left)
	}
	return l.last + math.Max(least, 0)*float64(len(l.xfers))/l.rate
}

// done ends, at t, the transfers due by then, in the order they started,
// and returns their ids. A transfer is due when no more than a
// nanosecond's bytes are left: at simulated times of minutes, a time's
// rounding is worth more than a byte on a fast link, and a transfer
// left a rounding short of its end would come due again and again at
// the same instant.
func (l *link) done(t float64) []int64 {
	if l.nextDone() > t {
		return nil
	}
	l.update(t)
	least := math.Inf(1)
	for _, x := range l.xfers {
		least = math.Min(least, x.left)
	}
	due := math.Max(least, 0) + l.rate*1e-9 + 1e-3
	out := l.finish[:0]
	kept := l.xfers[:0]
	for _, x := range l.xfers {
		if x.left <= due {
			out = append(out, x.id)
			continue
		}
		kept = append(kept, x)
	}
	l.xfers, l.finish = kept, out
	return out
}

// drop takes request id off the link at t.
func (l *link) drop(id int64, t float64) {
	l.update(t)
	for i, x := range l.xfers {
		if x.id == id {
			l.xfers = append(l.xfers[:i], l.xfers[i+1:]...)
			return
		}
	}
}
