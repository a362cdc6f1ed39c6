package driver

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// Sender sends the driver's requests: the HTTP client of a live run, or
// the simulated server of a prediction.
type Sender interface {
	// Send starts f's request and returns without waiting for it; the
	// sender calls f.Done once the request has ended, from any goroutine,
	// possibly before Send returns (a request refused at once).
	Send(ctx context.Context, f *Flight)
	// Abort cuts every request in flight short: each still ends through
	// f.Done, as interrupted. Nothing is sent after an Abort.
	Abort()
}

// Options are what a Driver runs against.
type Options struct {
	Clock  Clock
	Sender Sender
	// Records, when set, receives every request's record as it ends, the
	// warm-up's and a call's unmeasured turns included.
	Records *record.Writer
	// Measured, when set, receives each measured request's record as it
	// ends, from the goroutine that ended it (many at once, live); it must
	// not keep the pointer.
	Measured func(*record.Record)
	// Prefixes says what share of each measured prompt earlier ones sent;
	// a fresh tracker when nil.
	Prefixes *workload.PrefixTracker
	// Turnaround is how long after a request ends its client acts on it: a
	// stream's next request, a slot's next arrival, a call's gap all start
	// that much later. Zero for a live client, which acts as soon as it
	// can; a simulated one needs a little, as the engine starts its next
	// step the instant the last ends, and a follow-up can never be in a
	// step that starts when its predecessor finished.
	Turnaround time.Duration
	// StreamGap is the gap between a closed loop's streams' first
	// requests. A live client's streams start apart by themselves (each
	// dials its connection, about 0.4 ms a stream on knee's client); a
	// simulated one started at one instant would send identical requests
	// in lockstep for the whole window.
	StreamGap time.Duration
	// MaxInFlight, when above 0, is the most requests the host can hold
	// in flight; Overflow is called, once, when that many are, and is to
	// stop the level (cancel its context): what was measured is kept.
	MaxInFlight int64
	Overflow    func()
	// ToolRounds is how many times in one turn of a call a tool call is
	// answered with ToolResult (each call's canned output), for the
	// model to go on: model, tool, model, as an agent's loop runs. 0:
	// never, a tool call ends its turn.
	ToolRounds int
	ToolResult string
	// Tools are offered by every request without tools of its own: put
	// in the request, so the prefix tracker sees them as the server does.
	Tools []workload.Tool
	// ServerHistory has a call's later turns name the answer before them
	// (the Responses API's previous_response_id) and send only their own
	// new messages: the server holds the history, where by default each
	// turn sends the whole conversation.
	ServerHistory bool
}

// Driver runs levels of load, one at a time, on its clock and sender.
type Driver struct {
	o     Options
	clock Clock
	// mu guards the level in progress against the senders' Done calls.
	mu sync.Mutex
	// level is the phase in progress.
	level phase
	// sleeping is when the dispatcher's Wait ends: a Done that queues an
	// earlier event wakes it.
	sleeping time.Duration
	// starts and spare are the flights a step decided to send, double
	// buffered so a step can fill one while the other is being sent.
	starts, spare []*Flight
	// free holds finished flights for reuse, under freeMu (steps take
	// flights while holding mu). Not a sync.Pool:
	// the runtime keeps every pool reachable until two collections pass,
	// and a pool inside the driver kept the whole driver and its sender
	// alive with it (a plan's predictions held a dozen fleets' scheduler
	// cores that way, a third of its heap).
	free   []*Flight
	freeMu sync.Mutex
	counts Counts
	// overflowed is set once Options.Overflow was called.
	overflowed bool
	// warm tallies the unmeasured requests' refusals.
	warm refusals
}

// Counts are a level's running totals, for a live progress line.
type Counts struct {
	Sent, OK, Errors, InFlight atomic.Int64
}

// New returns a driver.
func New(o Options) *Driver {
	if o.Prefixes == nil {
		o.Prefixes = workload.NewPrefixTracker()
	}
	return &Driver{o: o, clock: o.Clock}
}

// Counts are the running totals of the level in progress.
func (d *Driver) Counts() *Counts { return &d.counts }

// Prefixes is the tracker the measured prompts' shares were taken from.
func (d *Driver) Prefixes() *workload.PrefixTracker { return d.o.Prefixes }

// phase is one phase of a level as the dispatcher drives it: the rules of
// requests (open and closed loops) or of calls. Every method runs under
// the driver's lock.
type phase interface {
	// step handles every event due by now, queueing what to send
	// (Driver.start).
	step(now time.Duration)
	// next is the time of the next event, and whether it is a send that
	// should go out as near its time as the clock can manage.
	next() (at time.Duration, precise bool)
	// stop ends sending at once (ctx ended): nothing more goes out.
	stop(now time.Duration)
	// abort reports, once, that what is in flight must be cut (the drain
	// timed out, or the level was stopped).
	abort() bool
	// finished reports whether the phase is over.
	finished() bool
	// done books a request's end and reports whether the dispatcher must
	// look at the level before its next event.
	done(f *Flight) bool
}

// run drives p until it is finished.
func (d *Driver) run(ctx context.Context, p phase) {
	d.mu.Lock()
	d.level = p
	d.mu.Unlock()
	stuck := 0
	for {
		t, done := d.turn(ctx, p)
		if done {
			return
		}
		if t.abort {
			d.o.Sender.Abort()
		}
		d.sendAll(ctx, t.starts)
		if len(t.starts) > 0 || t.abort {
			continue
		}
		if !d.clock.Wait(ctx, t.next, t.precise) {
			// Nothing can ever happen (a simulated server with nothing to
			// do while the driver waits for it): cut what is in flight
			// rather than wait forever, and give up if even that ends
			// nothing.
			if stuck++; stuck > 2 {
				d.mu.Lock()
				d.level = nil
				d.mu.Unlock()
				return
			}
			d.mu.Lock()
			p.stop(d.clock.Now())
			d.mu.Unlock()
			d.o.Sender.Abort()
		}
	}
}

// turnOut is what one turn of the dispatcher found: the flights to send,
// when to look again, and whether to cut what is in flight.
type turnOut struct {
	starts  []*Flight
	next    time.Duration
	precise bool
	abort   bool
}

// turn steps the phase under the lock and takes the flights it started;
// done when the phase has finished.
func (d *Driver) turn(ctx context.Context, p phase) (turnOut, bool) {
	cancelled := ctx.Err() != nil
	d.mu.Lock()
	now := d.clock.Now()
	if cancelled {
		p.stop(now)
	}
	p.step(now)
	t := turnOut{abort: p.abort()}
	if p.finished() {
		if r, ok := p.(*requests); !ok || !r.handover {
			// A ramp stays the level: the ends of its requests still
			// running are booked on it until the window adopts them.
			d.level = nil
		}
		d.mu.Unlock()
		if t.abort {
			// A ramp cut by a signal hands over requests still running:
			// they are cut now, as the level's would be.
			d.o.Sender.Abort()
		}
		return t, true
	}
	t.next, t.precise = p.next()
	t.starts = d.starts
	d.starts = d.spare[:0]
	if len(t.starts) > 0 || t.abort {
		// The dispatcher looks again as soon as these are sent, and
		// sees whatever their ends queued: no Done need wake it.
		d.sleeping = 0
	} else {
		d.sleeping = t.next
	}
	d.mu.Unlock()
	return t, false
}

// sendAll sends the flights started, keeping their slice for the next
// turn, and calls Overflow once when the host's bound on requests in
// flight is reached.
func (d *Driver) sendAll(ctx context.Context, starts []*Flight) {
	for i, f := range starts {
		d.counts.Sent.Add(1)
		d.counts.InFlight.Add(1)
		d.o.Sender.Send(ctx, f)
		starts[i] = nil
	}
	d.spare = starts[:0]
	if bound := d.o.MaxInFlight; bound > 0 && d.counts.InFlight.Load() >= bound && d.o.Overflow != nil && !d.overflowed {
		d.overflowed = true
		d.o.Overflow()
	}
}

// start queues f to be sent once the step is over.
func (d *Driver) start(f *Flight) { d.starts = append(d.starts, f) }

// flight is a fresh flight.
func (d *Driver) flight(measured bool) *Flight {
	d.freeMu.Lock()
	var f *Flight
	if n := len(d.free); n > 0 {
		f, d.free = d.free[n-1], d.free[:n-1]
	}
	d.freeMu.Unlock()
	if f == nil {
		f = &Flight{d: d}
	}
	f.Rec.Reset()
	f.measured, f.worker, f.call, f.turn, f.built, f.KeepText, f.src = measured, -1, nil, 0, false, false, nil
	f.paced, f.lateFrom = false, 0
	f.req = workload.Request{}
	return f
}

// complete is a request's end (Flight.Done).
func (d *Driver) complete(f *Flight) {
	rec := &f.Rec
	if f.paced && rec.Sent > 0 {
		// Lateness is what a server could see: from when the request was
		// due to when it went out, the hand-off to its sender included
		// (the dispatcher's own step was all it counted before, a fifth
		// less at the p99).
		rec.Lateness = max(rec.Sent-f.lateFrom, 0)
	}
	if c := f.call; c != nil && d.o.ServerHistory && rec.Class == "" && rec.ResponseID == "" && f.turn < c.script.Turns() {
		rec.Class = record.ClassMalformed
		rec.Message = "the answer carried no response id (response.created) for the next turn to name as previous_response_id"
	}
	d.counts.InFlight.Add(-1)
	switch rec.Class {
	case "":
		d.counts.OK.Add(1)
	case record.ClassInterrupted:
	default:
		d.counts.Errors.Add(1)
	}
	d.o.Records.Write(rec)
	if f.measured && d.o.Measured != nil {
		d.o.Measured(rec)
	} else if !f.measured {
		d.warm.add(rec)
	}
	d.mu.Lock()
	wake := d.level != nil && d.level.done(f)
	d.mu.Unlock()
	d.freeMu.Lock()
	d.free = append(d.free, f)
	d.freeMu.Unlock()
	if wake {
		d.clock.Wake()
	}
}

// Flight is one request on its way: the record the driver opened for it
// and the request it builds on demand. The sender owns it from Send until
// it calls Done.
type Flight struct {
	// Rec is the request's record: the driver fills in what it is and when
	// it was due (Index, Tag, Scheduled, Lateness, Waited, and for a call's
	// turn Call, Origin, Paused, Warmup), the sender what became of it.
	Rec record.Record
	// KeepText asks the sender for the answer's text in Rec.Text (a call's
	// next turn carries it).
	KeepText bool

	d        *Driver
	src      workload.Source
	measured bool
	worker   int
	call     *call
	turn     int
	req      workload.Request
	built    bool
	// unwritten marks a request said as words (RequestWords), its text
	// not yet written.
	unwritten bool
	// paced marks a request sent on a schedule (an open loop's arrival, a
	// call's turn, a closed loop's stream ready again): its lateness is
	// counted from lateFrom (when it was due, or when the slot it waited
	// for came free) to when the sender stamped it sent.
	paced    bool
	lateFrom time.Duration
}

// IsTurn reports whether the request is a call's turn.
func (f *Flight) IsTurn() bool { return f.call != nil }

// Measured reports whether the request counts in the level's window (not
// a warm-up request, nor a call's warm-up turn).
func (f *Flight) Measured() bool { return f.measured }

// Request is what to send, built on first use on the sender's goroutine
// (a live open loop builds its prompts off the dispatcher's thread): the
// source's request Rec.Index, a warm-up request's unmeasured variant, or
// a call's turn with the answers so far. A measured prompt's shared
// share (PrefixShare) is taken from it then, in the order sent.
func (f *Flight) Request() *workload.Request {
	if f.built {
		if f.unwritten {
			// Said as words: the text, written now (and shared before).
			f.req.Messages, f.unwritten = f.src.Request(f.Rec.Index).Messages, false
		}
		return &f.req
	}
	f.built = true
	d := f.d
	if c := f.call; c != nil {
		f.req = c.src.Turn(c.script, f.turn, c.answers)
		withExchanges(&f.req, c)
		d.offerTools(&f.req)
		f.Rec.PrefixShare = d.o.Prefixes.Share(&f.req)
		if d.o.ServerHistory {
			serverHeld(&f.req, c, f.turn)
		}
		return &f.req
	}
	f.req = f.src.Request(f.Rec.Index)
	if !f.measured {
		f.req = WarmupRequest(f.req, f.Rec.Index)
	}
	f.Rec.Tag = f.req.Tag
	f.Rec.MixClass = f.req.Class
	d.offerTools(&f.req)
	if f.measured {
		f.Rec.PrefixShare = d.o.Prefixes.Share(&f.req)
	}
	return &f.req
}

// serverHeld makes turn k of call c continue the answer before it on the
// server: only the messages after the last answer go, naming that
// answer's response; every turn but the last asks to be kept for the
// next to name.
func serverHeld(r *workload.Request, c *call, k int) {
	// A round may follow any answer, so every one is kept.
	r.KeepResponse = true
	if c.lastResponse == "" || k <= 1 && c.rounds == 0 {
		return
	}
	r.PreviousResponse = c.lastResponse
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "assistant" {
			r.Messages = r.Messages[i+1:]
			break
		}
	}
}

// Done tells the driver the request has ended, its record filled. The
// flight is the driver's again once Done is called.
func (f *Flight) Done() { f.d.complete(f) }

// WarmupRequest is warm-up request idx: the workload's request opened by
// a tag no measured request has, so warming the server (its connections,
// its kernels) never warms the prefix cache a measured request then hits.
func WarmupRequest(req workload.Request, idx int) workload.Request {
	return workload.Unmeasured(req, "[knee warm-up "+strconv.Itoa(idx)+"]")
}
