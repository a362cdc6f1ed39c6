package engine

import (
	"math"
	"time"

	"github.com/kneebench/knee/simulator/sched"
)

// loop is the only code that touches time. Each step starts where the
// previous one ended (or at the next arrival when idle), takes in every
// request that had arrived by then, and releases its tokens at its end.
func (s *Scheduler) loop() {
	defer close(s.done)
	timer := newStoppedTimer()
	defer timer.Stop()
	end := math.Inf(-1)
	var emitted []sched.Emission
	for {
		s.takeInbox()
		start, next := s.nextStart(timer, end)
		if next == loopAgain {
			continue
		}
		if next == loopStop {
			s.shutdown()
			return
		}
		n := 0
		for n < len(s.pending) && s.pending[n].Arrival <= start {
			s.core.Add(s.pending[n])
			n++
		}
		s.pending = s.pending[n:]
		st := s.core.Step(start)
		if st == nil {
			continue
		}
		end = st.End
		emitted = append(emitted[:0], st.Emitted...)
		lag, stopped := s.sleepTo(timer, end)
		s.deliver(st, emitted, lag)
		s.publish()
		if s.onStep != nil {
			s.onStep(st, lag)
		}
		if stopped {
			s.shutdown()
			return
		}
	}
}

// takeInbox applies what arrived between steps: cache resets, aborts,
// and new requests, kept in order of arrival.
func (s *Scheduler) takeInbox() {
	s.mu.Lock()
	inbox, aborts, resets := s.inbox, s.aborts, s.resets
	s.inbox, s.aborts, s.resets = nil, nil, nil
	s.mu.Unlock()
	for _, r := range resets {
		if s.pd != nil {
			r <- s.pd.ResetPrefixCache()
			continue
		}
		r <- s.core.ResetPrefixCache()
	}
	for _, id := range aborts {
		if s.pd != nil {
			s.pd.Abort(id, s.simTime(time.Now()))
		} else {
			s.core.Abort(id)
		}
		s.dropPending(id)
	}
	if len(aborts) > 0 {
		s.publish()
	}
	if len(inbox) > 0 {
		s.pending = append(s.pending, inbox...)
		sortPending(s.pending)
	}
}

// nextStart is when the next step starts: at the last one's end, or, with
// the core idle, at the next arrival; it waits for work when there is
// none, and for an arrival submitted ahead of time.
func (s *Scheduler) nextStart(timer *time.Timer, end float64) (float64, int) {
	if s.core.Idle() && len(s.pending) == 0 {
		select {
		case <-s.wake:
			return 0, loopAgain
		case <-s.stop:
			return 0, loopStop
		}
	}
	if !s.core.Idle() {
		return end, loopStep
	}
	start := math.Max(end, s.pending[0].Arrival)
	// Only a test submits arrivals ahead of time; wait for them.
	if wait := time.Until(s.epoch.Add(time.Duration(start * float64(time.Second)))); wait > 0 {
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-s.wake:
			timer.Stop()
			return 0, loopAgain
		case <-s.stop:
			return 0, loopStop
		}
	}
	return start, loopStep
}

// sleepTo sleeps until the step's absolute end and reports the lateness.
func (s *Scheduler) sleepTo(timer *time.Timer, end float64) (time.Duration, bool) {
	deadline := s.epoch.Add(time.Duration(end * float64(time.Second)))
	if d := time.Until(deadline); d > 0 {
		timer.Reset(d)
		select {
		case <-timer.C:
		case <-s.stop:
			timer.Stop()
			return 0, true
		}
	}
	lag := time.Since(deadline)
	if lag < 0 {
		lag = 0
	}
	return lag, false
}

// deliver hands the step's tokens to their streams without ever blocking:
// each stream's channel holds its whole answer.
func (s *Scheduler) deliver(st *sched.Step, emitted []sched.Emission, lag time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range emitted {
		str := s.streams[e.Seq.ID]
		if str == nil {
			continue
		}
		from, ok := s.out.Release(st, e)
		if !ok {
			continue
		}
		// The group the token closes leaves now, in one event.
		for i := from; i <= e.Index; i++ {
			str.ch <- schedItem{index: i, sim: st.End - str.arrival, lag: lag, packed: i < e.Index}
		}
	}
	for _, q := range st.Finished {
		str := s.streams[q.ID]
		if str == nil {
			continue
		}
		str.ch <- schedItem{done: true, info: s.streamInfo(q)}
		delete(s.streams, q.ID)
	}
}

// streamInfo is what the engine knows of a request that ended: a
// disaggregated model's from its phases, which it then forgets.
func (s *Scheduler) streamInfo(q *sched.Seq) StreamInfo {
	info := StreamInfo{CachedTokens: q.CachedTokens, QueueTime: q.ScheduledAt - q.Arrival,
		PrefillTime: q.FirstTokenAt - q.ScheduledAt, Preemptions: q.Preemptions, PrefillComputed: q.PrefillComputed}
	if s.pd != nil {
		if ph, ok := s.pd.Phases(q.ID); ok {
			info.Phases = &ph
			info.CachedTokens, info.QueueTime, info.PrefillTime = ph.CachedTokens, ph.PrefillQueue(), ph.FirstToken-ph.PrefillStart
		}
		s.pd.Done(q.ID)
	}
	return info
}

// What the loop does after waiting for work.
const (
	loopStep  = iota // step at the start given
	loopAgain        // woken: look at the inbox again
	loopStop         // stopped
)
