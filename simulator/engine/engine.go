package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/sched"
)

// Plan is what an engine times: the content room's plan of a request.
type Plan = content.Plan

// TokenEvent is one token released by an engine.
type TokenEvent struct {
	Index int
	// SimTime is when the engine scheduled the token, in seconds after the
	// request's arrival.
	SimTime float64
	// Lag is how late the token was released against that deadline: the
	// simulator's own error bar.
	Lag time.Duration
	// More reports that what follows this token (the next token, or the
	// end of the answer) is already due, so a writer may hold this token
	// and send both in one write without delaying either: every token of
	// an instant answer, the last token of any answer, or tokens an
	// overloaded machine released late.
	More bool
	// Packed says the token leaves in one event with the next, as a
	// stream interval's group does (vLLM's and SGLang's
	// --stream-interval): More is set too.
	Packed bool
}

// StreamInfo is what an engine knows about a request once it has streamed.
// Times are simulated seconds.
type StreamInfo struct {
	CachedTokens    int
	QueueTime       float64
	PrefillTime     float64
	Preemptions     int
	PrefillComputed int
	// Phases, for a disaggregated model, is the request's way through its
	// pools (QueueTime is then the prefill queue's, PrefillTime from the
	// prefill's start to the first token, the transfer included).
	Phases *sched.Phases
}

// Engine turns a plan and an arrival time into timed token events.
type Engine interface {
	// Name is the engine's name in models.yml.
	Name() string
	// Check rejects a plan the engine could never serve, before any byte
	// of the response is sent.
	Check(plan *Plan) error
	// Stream calls emit for each of the plan's tokens, in order, as each
	// falls due. It stops early when emit fails (the client went away) or
	// ctx ends, and frees whatever the request held.
	Stream(ctx context.Context, plan *Plan, arrival time.Time, emit func(TokenEvent) error) (StreamInfo, error)
	// Close stops background work.
	Close()
}

// ErrClientGone is returned by emit callbacks when the client hung up.
var ErrClientGone = errors.New("client went away")

// waiter sleeps one stream to its tokens' absolute deadlines. Every token
// targets its own deadline, so overshoot never accumulates.
//
// A select on ctx.Done() per token would make every stream of the server
// queue on one shared channel's lock many thousand times a second; the
// waiter instead hooks the context once per stream and sleeps on its own
// timer alone, which the hook fires early when ctx ends.
type waiter struct {
	ctx     context.Context
	timer   *time.Timer
	stopped atomic.Bool
	unhook  func() bool
}

func newWaiter(ctx context.Context) *waiter {
	w := &waiter{ctx: ctx, timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	w.unhook = context.AfterFunc(ctx, func() {
		w.stopped.Store(true)
		w.timer.Reset(0)
	})
	return w
}

// until waits for deadline (or the context's end) and returns how late it
// woke.
func (w *waiter) until(deadline time.Time) (time.Duration, error) {
	if w.stopped.Load() {
		return 0, w.ctx.Err()
	}
	if d := time.Until(deadline); d > 0 {
		w.timer.Reset(d)
		// The hook sets stopped before it fires the timer: if it has not
		// set it yet, its Reset(0) comes after ours and wakes us.
		if w.stopped.Load() {
			return 0, w.ctx.Err()
		}
		<-w.timer.C
		if w.stopped.Load() {
			return 0, w.ctx.Err()
		}
	}
	lag := time.Since(deadline)
	if lag < 0 {
		lag = 0
	}
	return lag, nil
}

// close releases the hook and the timer.
func (w *waiter) close() {
	w.unhook()
	w.timer.Stop()
}

// newStoppedTimer returns a timer ready for Reset.
func newStoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// Instant sends every token at once.
type Instant struct{}

var _ Engine = Instant{}

// Name implements Engine.
func (Instant) Name() string { return "instant" }

// Check implements Engine.
func (Instant) Check(*Plan) error { return nil }

// Close implements Engine.
func (Instant) Close() {}

// Stream implements Engine.
func (Instant) Stream(ctx context.Context, plan *Plan, arrival time.Time, emit func(TokenEvent) error) (StreamInfo, error) {
	for i := range plan.Tokens {
		if err := ctx.Err(); err != nil {
			return StreamInfo{}, err
		}
		lag := time.Since(arrival)
		if err := emit(TokenEvent{Index: i, Lag: lag, More: true}); err != nil {
			return StreamInfo{}, err
		}
	}
	return StreamInfo{}, nil
}

// FixedRate gives every request its own timeline: the first token after
// overhead + prompt/prefill rate, then one every 1/decode rate. Load changes
// nothing.
type FixedRate struct {
	Overhead      time.Duration
	PrefillPerSec float64
	DecodePerSec  float64
}

var _ Engine = (*FixedRate)(nil)

// Name implements Engine.
func (*FixedRate) Name() string { return "fixed_rate" }

// Check implements Engine.
func (*FixedRate) Check(*Plan) error { return nil }

// Close implements Engine.
func (*FixedRate) Close() {}

// TTFT is the simulated time to first token for a prompt, in seconds.
func (f *FixedRate) TTFT(promptTokens int) float64 {
	return f.Overhead.Seconds() + float64(promptTokens)/f.PrefillPerSec
}

// Stream implements Engine.
func (f *FixedRate) Stream(ctx context.Context, plan *Plan, arrival time.Time, emit func(TokenEvent) error) (StreamInfo, error) {
	ttft := f.TTFT(plan.PromptTokens)
	itl := 1 / f.DecodePerSec
	wait := newWaiter(ctx)
	defer wait.close()
	due := func(i int) (float64, time.Time) {
		sim := ttft + float64(i)*itl
		return sim, arrival.Add(time.Duration(sim * float64(time.Second)))
	}
	n := len(plan.Tokens)
	for i := range n {
		sim, deadline := due(i)
		lag, err := wait.until(deadline)
		if err != nil {
			return StreamInfo{}, err
		}
		_, next := due(i + 1)
		more := i+1 == n || !next.After(deadline.Add(lag))
		if err := emit(TokenEvent{Index: i, SimTime: sim, Lag: lag, More: more}); err != nil {
			return StreamInfo{}, err
		}
	}
	return StreamInfo{PrefillTime: ttft, PrefillComputed: plan.PromptTokens}, nil
}
