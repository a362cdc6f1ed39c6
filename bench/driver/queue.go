package driver

import "time"

// event is one timed event of a queue: at its time, in the order queued
// among equal times.
type event[T any] struct {
	at   time.Duration
	seq  uint64
	item T
}

func (a *event[T]) before(b *event[T]) bool {
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

// timeQueue holds events in time order (a binary heap); among events of
// one time the first queued comes first, so a level's order of events is
// the same on every run. It allocates only to grow.
type timeQueue[T any] struct {
	events []event[T]
	seq    uint64
}

// add queues item at at.
func (q *timeQueue[T]) add(at time.Duration, item T) {
	q.seq++
	q.events = append(q.events, event[T]{at: at, seq: q.seq, item: item})
	for i := len(q.events) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.events[i].before(&q.events[parent]) {
			break
		}
		q.events[i], q.events[parent] = q.events[parent], q.events[i]
		i = parent
	}
}

// next is the earliest event's time, or Never.
func (q *timeQueue[T]) next() time.Duration {
	if len(q.events) == 0 {
		return Never
	}
	return q.events[0].at
}

// len is how many events are queued.
func (q *timeQueue[T]) len() int { return len(q.events) }

// popDue takes the earliest event if it is due by now.
func (q *timeQueue[T]) popDue(now time.Duration) (T, time.Duration, bool) {
	var zero T
	if len(q.events) == 0 || q.events[0].at > now {
		return zero, 0, false
	}
	e := q.events[0]
	n := len(q.events) - 1
	q.events[0] = q.events[n]
	q.events[n] = event[T]{}
	q.events = q.events[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.events[l].before(&q.events[m]) {
			m = l
		}
		if r < n && q.events[r].before(&q.events[m]) {
			m = r
		}
		if m == i {
			break
		}
		q.events[i], q.events[m] = q.events[m], q.events[i]
		i = m
	}
	return e.item, e.at, true
}

// clear drops every event.
func (q *timeQueue[T]) clear() {
	clear(q.events)
	q.events = q.events[:0]
}
