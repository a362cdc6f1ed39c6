package driver

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// A fake server answers request i after service(i), with its first token
// halfway there and one chunk; the same rule in virtual time (simServer)
// and on a wall clock in a synctest bubble (liveServer), so a scenario run
// on both must give the very same records.
type serviceTime func(f *Flight) time.Duration

func answer(r *record.Record, sent, took time.Duration, keepText bool) {
	r.Sent, r.FirstToken, r.LastToken, r.Done = sent, sent+took/2, sent+took, sent+took
	r.Status, r.Chunks, r.CompletionTokens, r.PromptTokens, r.UsageReported = 200, 1, 1, 10, true
	if keepText {
		r.Text = append(r.Text[:0], fmt.Sprintf("answer %d", r.Index)...)
	}
}

// simServer is a Clock and a Sender in virtual time: a request ends at its
// send plus its service time. cancelAt, when set, cancels cancel once the
// clock reaches it.
type simServer struct {
	now      time.Duration
	woken    bool
	flights  timeQueue[*Flight]
	service  serviceTime
	cancelAt time.Duration
	cancel   context.CancelFunc
}

func (s *simServer) Now() time.Duration { return s.now }
func (s *simServer) Wall() time.Time    { return time.Time{} }
func (s *simServer) Wake()              { s.woken = true }

func (s *simServer) Wait(ctx context.Context, until time.Duration, _ bool) bool {
	for {
		if s.woken || ctx.Err() != nil {
			s.woken = false
			return true
		}
		t := s.flights.next()
		if s.cancel != nil && s.cancelAt > s.now && s.cancelAt <= min(t, until) {
			s.now = s.cancelAt
			s.cancel()
			return true
		}
		if t > until {
			if until == Never {
				return false
			}
			s.now = until
			return true
		}
		s.now = t
		for {
			f, at, ok := s.flights.popDue(s.now)
			if !ok {
				break
			}
			answer(&f.Rec, f.Rec.Sent, at-f.Rec.Sent, f.KeepText)
			f.Done()
		}
		if s.now >= until {
			return true
		}
	}
}

func (s *simServer) Send(_ context.Context, f *Flight) {
	f.Request()
	f.Rec.Sent = s.now
	s.flights.add(s.now+s.service(f), f)
}

func (s *simServer) Abort() {
	var cut []*Flight
	for {
		f, _, ok := s.flights.popDue(Never - 1)
		if !ok {
			break
		}
		cut = append(cut, f)
	}
	slices.SortFunc(cut, func(a, b *Flight) int { return a.Rec.Index - b.Rec.Index })
	for _, f := range cut {
		f.Rec.Class, f.Rec.Done = record.ClassInterrupted, s.now
		f.Done()
	}
}

// liveServer is a Sender on the wall clock: a goroutine per request that
// sleeps its service time (synctest's fake time, in a bubble).
type liveServer struct {
	clock   *WallClock
	service serviceTime
	mu      sync.Mutex
	abort   chan struct{}
}

func (s *liveServer) Send(ctx context.Context, f *Flight) {
	f.Request()
	sent := s.clock.Now()
	took := s.service(f)
	s.mu.Lock()
	abort := s.abort
	s.mu.Unlock()
	go func() {
		t := time.NewTimer(took)
		defer t.Stop()
		select {
		case <-t.C:
			answer(&f.Rec, sent, took, f.KeepText)
		case <-abort:
			f.Rec.Sent, f.Rec.Class, f.Rec.Done = sent, record.ClassInterrupted, s.clock.Now()
		}
		f.Done()
	}()
}

func (s *liveServer) Abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.abort)
}

// outcome is what a scenario measured: its records, in index order, and
// what the driver counted.
type outcome struct {
	recs   []record.Record
	window Window
	tally  CallTally
	late   time.Duration
	err    error
	// sent and inFlight are the driver's counts once the level is over.
	sent, inFlight int64
}

// scenario is one level to run on either clock.
type scenario struct {
	requests *Requests
	calls    *Calls
	service  serviceTime
	// turnaround is the driver's, on both clocks.
	turnaround time.Duration
	// cancelAt, when set, cancels the level then.
	cancelAt time.Duration
}

// keep collects records, measured and all, safely from many goroutines.
type keep struct {
	mu   sync.Mutex
	recs []record.Record
}

func (k *keep) measured(r *record.Record) {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := *r
	c.ChunkTimes, c.Text = slices.Clone(r.ChunkTimes), slices.Clone(r.Text)
	k.recs = append(k.recs, c)
}

// sorted is the records in index order.
func sorted(recs []record.Record) []record.Record {
	slices.SortFunc(recs, func(a, b record.Record) int { return a.Index - b.Index })
	return recs
}

func (sc scenario) run(ctx context.Context, d *Driver, k *keep) outcome {
	var out outcome
	if sc.requests != nil {
		o, err := d.RunRequests(ctx, *sc.requests)
		out.window, out.late, out.err = o.Window, o.Late, err
	} else {
		o, err := d.RunCalls(ctx, *sc.calls)
		out.tally, out.late, out.err = o.Tally, o.Late, err
	}
	out.recs = sorted(k.recs)
	c := d.Counts()
	out.sent, out.inFlight = c.Sent.Load(), c.InFlight.Load()
	return out
}

// virtual runs the scenario in virtual time.
func (sc scenario) virtual(t *testing.T) outcome {
	t.Helper()
	ctx := context.Background()
	sim := &simServer{service: sc.service}
	if sc.cancelAt > 0 {
		ctx, sim.cancel = context.WithCancel(ctx)
		sim.cancelAt = sc.cancelAt
	}
	k := &keep{}
	d := New(Options{Clock: sim, Sender: sim, Measured: k.measured, Turnaround: sc.turnaround})
	return sc.run(ctx, d, k)
}

// live runs the scenario on a wall clock in a synctest bubble, its
// requests on goroutines.
func (sc scenario) live(t *testing.T) outcome {
	t.Helper()
	var out outcome
	synctest.Test(t, func(t *testing.T) {
		clock := NewWallClock(time.Now())
		clock.precise = goSleep
		srv := &liveServer{clock: clock, service: sc.service, abort: make(chan struct{})}
		k := &keep{}
		d := New(Options{Clock: clock, Sender: srv, Measured: k.measured, Turnaround: sc.turnaround})
		ctx := context.Background()
		if sc.cancelAt > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			time.AfterFunc(sc.cancelAt, cancel)
		}
		out = sc.run(ctx, d, k)
	})
	return out
}

// constant is a fixed service time.
func constant(d time.Duration) serviceTime { return func(*Flight) time.Duration { return d } }

// fixed is a source of one short prompt, tagged by nothing.
var fixed = workload.FixedPrompt{Text: "hi", MaxTokens: 1}

// threeTurns is a call source: three turns, the first a warm-up, the next
// two after gaps of 2 s and 3 s.
type threeTurns struct{}

func (threeTurns) Call(i int) workload.Call {
	return workload.Call{Index: i, System: "s", User: []string{"a", "b", "c"}, Gaps: []time.Duration{0, 2 * time.Second, 3 * time.Second}, Warmup: 1}
}

func (threeTurns) Turn(c workload.Call, k int, answers []string) workload.Request {
	msgs := []workload.Message{{Role: "system", Content: fmt.Sprintf("call %d", c.Index)}}
	for j := 0; j < k; j++ {
		msgs = append(msgs, workload.Message{Role: "user", Content: c.User[j]})
		if j < len(answers) {
			msgs = append(msgs, workload.Message{Role: "assistant", Content: answers[j]})
		}
	}
	return workload.Request{Messages: msgs, MaxTokens: 1, Tag: k}
}

func (threeTurns) MeasuredTurns(int) int { return 2 }
func (threeTurns) ColdThreshold() int    { return 0 }
