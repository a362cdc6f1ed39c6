package engine

import (
	"math"
	"sort"
	"time"

	"github.com/kneebench/knee/simulator/sched"
)

// NewDisaggScheduler starts the engine of a disaggregated model: the
// same streams as a scheduler model's, its timeline the pure core of
// both pools and their links (sched.Disagg) driven in wall time. onStep,
// when set, sees every step of either pool.
func NewDisaggScheduler(cfg sched.DisaggConfig, onStep func(sched.Role, *sched.Step, time.Duration)) *Scheduler {
	s := &Scheduler{
		pd: sched.NewDisagg(cfg), epoch: time.Now(), out: cfg.Decode.Outputs(),
		streams: map[int64]*schedStream{},
		wake:    make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if onStep != nil {
		s.pd.OnStep = func(role sched.Role, _ int, st *sched.Step) { onStep(role, st, s.lateness(st.End)) }
	}
	go s.pdLoop()
	return s
}

// lateness is how late the wall clock is against simulated time t.
func (s *Scheduler) lateness(t float64) time.Duration {
	return max(time.Since(s.epoch.Add(time.Duration(t*float64(time.Second)))), 0)
}

// pdLoop is the disaggregated model's only code that touches time. It
// takes in every arrival at its own instant, even while other replicas
// are mid-step, ends every step and transfer at its end, and sleeps
// until the next of either (or an arrival) is due.
func (s *Scheduler) pdLoop() {
	defer close(s.done)
	timer := newStoppedTimer()
	defer timer.Stop()
	for {
		s.takeInbox()
		s.pdCatchUp(time.Now())
		s.publish()
		next := s.pd.NextEvent()
		if len(s.pending) > 0 {
			next = math.Min(next, s.pending[0].Arrival)
		}
		if math.IsInf(next, 1) {
			select {
			case <-s.wake:
				continue
			case <-s.stop:
				s.shutdown()
				return
			}
		}
		if d := time.Until(s.wallAt(next)); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-s.wake:
				timer.Stop()
			case <-s.stop:
				timer.Stop()
				s.shutdown()
				return
			}
		}
	}
}

// wallAt is the wall time of simulated time t: what the loop sleeps to,
// and what an event is due by.
func (s *Scheduler) wallAt(t float64) time.Time {
	return s.epoch.Add(time.Duration(t * float64(time.Second)))
}

// pdCatchUp runs the core through every arrival and event due by now,
// in time order, and hands decode steps' tokens to their streams.
func (s *Scheduler) pdCatchUp(now time.Time) {
	due := func(t float64) bool { return !s.wallAt(t).After(now) }
	for {
		next := s.pd.NextEvent()
		if len(s.pending) > 0 && s.pending[0].Arrival <= next && due(s.pending[0].Arrival) {
			r := s.pending[0]
			s.pending = s.pending[1:]
			key := uint64(0)
			if r.IDs != nil && s.pd.Config().Routing == sched.PrefixAffinity {
				key = sched.PrefixKey(r.IDs)
			}
			s.pd.Add(r, key)
			s.pd.Start(r.Arrival)
			continue
		}
		if math.IsInf(next, 1) || !due(next) {
			return
		}
		s.pd.Advance(func(st *sched.Step) {
			s.deliver(st, st.Emitted, s.lateness(st.End))
		})
	}
}

// pdSnapshot is the disaggregated model's state for gauges: every
// pool's requests and blocks together, a prompt on a link counted as
// waiting; and each pool's own (a prompt on a link waits for the decode
// pool).
func (s *Scheduler) pdSnapshot() (Snapshot, [2]Snapshot) {
	var pools [2]Snapshot
	pools[sched.RoleDecode].Waiting = s.pd.InTransfer()
	pools[sched.RolePrefill].Waiting = len(s.pending)
	var all Snapshot
	blocks := [2]int{}
	for _, role := range []sched.Role{sched.RolePrefill, sched.RoleDecode} {
		p := &pools[role]
		for i := range s.pd.Replicas(role) {
			c := s.pd.Core(role, i)
			p.Running += c.Running()
			p.Waiting += c.Waiting()
			p.UsedBlocks += c.UsedBlocks()
			blocks[role] += c.Config().NumBlocks
			p.Preemptions += c.Preemptions
			p.PrefixQueries += c.PrefixQueries
			p.PrefixHits += c.PrefixHits
		}
		p.KVUsage = float64(p.UsedBlocks) / float64(max(blocks[role], 1))
		all.Running += p.Running
		all.Waiting += p.Waiting
		all.UsedBlocks += p.UsedBlocks
		all.Preemptions += p.Preemptions
		all.PrefixQueries += p.PrefixQueries
		all.PrefixHits += p.PrefixHits
	}
	all.KVUsage = float64(all.UsedBlocks) / float64(max(blocks[0]+blocks[1], 1))
	return all, pools
}

// PoolState is a disaggregated model's pool's state after its latest
// event.
func (s *Scheduler) PoolState(role sched.Role) Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pools[role]
}

// sortPending keeps arrivals in order.
func sortPending(p []sched.Request) {
	sort.SliceStable(p, func(i, j int) bool { return p[i].Arrival < p[j].Arrival })
}
