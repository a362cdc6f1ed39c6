package predict

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
)

// refusedCost is the virtual time a refused request takes to come back.
// Without it a closed-loop stream whose requests all fail would send
// again at the same instant forever.
const refusedCost = 100 * time.Microsecond

// turnaround is how long after a request ends its client can act on it
// (driver.Options.Turnaround). Its size hardly matters; that it is not
// zero does: the engine starts its next step the instant the last one
// ends, so, as against a live server, a follow-up can never be in the
// step that starts when its predecessor finished.
const turnaround = time.Microsecond

// simServer is the simulated server as the driver sees it: a Clock whose
// time is the simulation's, which runs the fleet's scheduler cores step by
// step as it advances, and a Sender that queues requests in them after the
// content side (the simulator's own) has said what they are.
type simServer struct {
	target        Target
	memo          *Memo
	fleet         *fleet
	contextLength int
	now           time.Duration
	woken         bool
	flights       map[int64]*driver.Flight
	nextID        int64
}

func newSimServer(t Target, cfg sched.Config, contextLength, replicas int, routing Routing, seed uint64, memo *Memo) *simServer {
	return &simServer{target: t, memo: memo, fleet: newFleet(cfg, max(replicas, 1), routing, seed), contextLength: contextLength,
		flights: map[int64]*driver.Flight{}}
}

// Now implements driver.Clock.
func (s *simServer) Now() time.Duration { return s.now }

// Wall implements driver.Clock: simulated time stands for no wall time.
func (s *simServer) Wall() time.Time { return time.Time{} }

// Wake implements driver.Clock.
func (s *simServer) Wake() { s.woken = true }

// Wait implements driver.Clock: the fleet runs its steps, each starting
// the instant the last ended, until the clock reaches until or a step's
// end woke the driver (a request it ended queued an earlier event).
func (s *simServer) Wait(_ context.Context, until time.Duration, _ bool) bool {
	for {
		if s.woken {
			s.woken = false
			return true
		}
		s.fleet.start(s.now)
		t := s.fleet.nextEnd()
		if t > until {
			if until == driver.Never {
				return false
			}
			s.now = until
			return true
		}
		s.now = max(s.now, t)
		s.fleet.finish(s.now, s.complete)
		if s.now >= until {
			s.woken = false
			return true
		}
	}
}

// Send implements driver.Sender: the content side says what the request
// is and what the answer will be, then a replica's core takes it, unless
// the server would refuse it.
func (s *simServer) Send(_ context.Context, f *driver.Flight) {
	rec := &f.Rec
	rec.Sent = s.now
	said := s.say(f)
	rec.MaxTokens = said.maxTokens
	err := said.err
	if err == nil {
		err = engine.CheckFits(s.fleet.core(), said.plan)
	}
	if err != nil || said.sr.OutputLen == 0 {
		prompt := 0
		if said.plan != nil {
			prompt = said.plan.PromptTokens
		}
		refuse(rec, err, prompt, s.now)
		f.Done()
		return
	}
	rec.PromptTokens, rec.CompletionTokens = said.sr.PromptLen, said.sr.OutputLen
	if f.KeepText {
		rec.Text = append(rec.Text[:0], strings.Join(said.plan.Tokens, "")...)
	}
	id := s.nextID
	s.nextID++
	sr := said.sr
	sr.Arrival, sr.ID = s.now.Seconds(), id
	s.fleet.add(sr)
	rec.ChunkTimes = slices.Grow(rec.ChunkTimes[:0], sr.OutputLen)
	s.flights[id] = f
}

// say is what the content side says to f's request: from the level's memo
// when it has one (measured single requests only: a warm-up's index may be
// a trace's line too, and a call's turns depend on its answers).
func (s *simServer) say(f *driver.Flight) *said {
	m := s.memo
	if !f.Measured() || f.IsTurn() {
		m = nil
	}
	if m != nil {
		if sd := m.get(f.Rec.Index); sd != nil {
			f.Rec.Tag, f.Rec.PrefixShare = sd.tag, sd.share
			return sd
		}
	}
	req := f.Request()
	sd := &said{tag: f.Rec.Tag, maxTokens: req.MaxTokens, share: f.Rec.PrefixShare}
	sd.plan, sd.err = s.target.Responder.Generate(s.target.genRequest(req), s.contextLength)
	if sd.err == nil {
		sd.sr = engine.Request(sd.plan, 0)
	}
	if m != nil {
		m.put(f.Rec.Index, sd)
	}
	return sd
}

// complete releases a step's tokens to their requests and ends the
// requests whose last token it was.
func (s *simServer) complete(st *sched.Step) {
	stamp(st, func(id int64) *record.Record { return &s.flights[id].Rec }, func(id int64) {
		f := s.flights[id]
		delete(s.flights, id)
		s.fleet.done(id)
		f.Done()
	})
}

// Abort implements driver.Sender: every request still running ends now,
// as the drain's cut does, in the order they were sent.
func (s *simServer) Abort() {
	for _, id := range slices.Sorted(maps.Keys(s.flights)) {
		f := s.flights[id]
		s.fleet.abort(id)
		delete(s.flights, id)
		f.Rec.Class, f.Rec.Done = record.ClassInterrupted, s.now
		f.Done()
	}
}
