package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/sched"
)

// Scheduler is the continuous-batching engine: one step loop per model
// drives the pure core in wall time, sleeping to each step's absolute end,
// so lateness never shifts the simulated timeline.
type Scheduler struct {
	core *sched.Core
	// pd, in place of core, is a disaggregated model's (pdLoop).
	pd     *sched.Disagg
	epoch  time.Time
	onStep func(st *sched.Step, lag time.Duration)

	mu      sync.Mutex
	inbox   []sched.Request
	aborts  []int64
	resets  []chan error
	streams map[int64]*schedStream
	nextID  int64
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	closed  bool

	// out says when computed tokens leave (a stream interval's groups, a
	// multi-step window's end).
	out sched.Outputs

	// pending holds arrivals not yet due (only tests submit future ones).
	pending []sched.Request
	state   Snapshot
	// pools is a disaggregated model's pools' state (PoolState).
	pools [2]Snapshot
}

var _ Engine = (*Scheduler)(nil)

type schedItem struct {
	index int
	// packed says the token leaves in one event with the next (a stream
	// interval's group).
	packed bool
	sim    float64
	lag    time.Duration
	done   bool
	info   StreamInfo
}

type schedStream struct {
	ch      chan schedItem
	arrival float64
}

// errEngineStopped ends streams that were open when the engine stopped.
var errEngineStopped = errors.New("engine stopped")

// NewScheduler starts a scheduler engine over core. onStep, when set, is
// called from the step loop after every step (for metrics).
func NewScheduler(core *sched.Core, onStep func(*sched.Step, time.Duration)) *Scheduler {
	s := &Scheduler{
		core: core, epoch: time.Now(), onStep: onStep, out: core.Config().Outputs(),
		streams: map[int64]*schedStream{},
		wake:    make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go s.loop()
	return s
}

// Name implements Engine.
func (*Scheduler) Name() string { return "scheduler" }

// Core exposes the core's configuration (read-only use).
func (s *Scheduler) Config() sched.Config {
	if s.pd != nil {
		return s.pd.Config().Decode
	}
	return s.core.Config()
}

// Check implements Engine: a request that could never fit in the KV cache
// is refused instead of waiting forever.
func (s *Scheduler) Check(plan *Plan) error {
	if s.pd != nil {
		// Both pools are fixed at start: read without the loop.
		if err := CheckFitsLen(s.pd.Core(sched.RolePrefill, 0), plan.PromptTokens, 1); err != nil {
			return err
		}
		return CheckFitsLen(s.pd.Core(sched.RoleDecode, 0), plan.PromptTokens, len(plan.Tokens))
	}
	return CheckFits(s.core, plan)
}

// CheckFits refuses, as the server does, a plan the core could never run:
// one with nothing to prefill, or one whose tokens need more KV-cache
// blocks than the cache holds.
func CheckFits(core *sched.Core, plan *Plan) error {
	return CheckFitsLen(core, plan.PromptTokens, len(plan.Tokens))
}

// CheckFitsLen is CheckFits for a request of prompt and output tokens.
func CheckFitsLen(core *sched.Core, prompt, output int) error {
	if prompt < 1 {
		// Nothing to prefill: the core would never schedule it.
		return &content.APIError{Status: 400, Type: "invalid_request_error", Param: "prompt", Message: "the prompt must hold at least one token"}
	}
	if cfg := core.Config(); cfg.WholePrompts && prompt > cfg.MaxNumBatchedTokens {
		return &content.APIError{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages",
			Message: fmt.Sprintf("the prompt (%d tokens) exceeds the %d tokens this engine computes in one step: it has no chunked prefill",
				prompt, cfg.MaxNumBatchedTokens)}
	}
	if !core.Fits(prompt, output) {
		cfg := core.Config()
		return &content.APIError{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages",
			Message: fmt.Sprintf("this request needs %d KV-cache blocks for %d prompt and %d output tokens, but the cache holds %d blocks of %d tokens",
				core.BlocksFor(prompt+output), prompt, output, cfg.NumBlocks, cfg.BlockSize)}
	}
	return nil
}

// Request is the core's request for a plan arriving at the simulated time
// arrival: the prompt's ids followed by the answer's give its prefix-cache
// blocks their identity.
func Request(plan *Plan, arrival float64) sched.Request {
	req := sched.Request{Arrival: arrival, PromptLen: plan.PromptTokens, OutputLen: len(plan.Tokens), EncoderFLOPs: plan.EncoderFLOPs,
		Adapter: plan.Adapter, Priority: plan.Priority}
	if plan.PromptIDs != nil {
		// The answer's ids follow the prompt's in the room left for them
		// (content.GenRequest.Words leaves it), or in a new slice of the
		// size needed: a prompt's ids listed with room to spare (a guess
		// from its text's length) would keep that room while the request
		// runs. The prompt's ids are the same either way.
		ids := plan.PromptIDs[:len(plan.PromptIDs):cap(plan.PromptIDs)]
		need := len(ids) + len(plan.Tokens)
		if cap(ids) < need || cap(ids) > need+need/8+64 {
			ids = make([]uint64, 0, len(plan.PromptIDs)+len(plan.Tokens))
			ids = append(ids, plan.PromptIDs...)
		}
		if plan.Unread {
			// One token repeated: its id is found once.
			id := content.TokenID(content.UnreadToken)
			for range plan.Tokens {
				ids = append(ids, id)
			}
		} else {
			for _, t := range plan.Tokens {
				ids = append(ids, content.TokenID(t))
			}
		}
		req.IDs = ids
	}
	return req
}

// Close implements Engine.
func (s *Scheduler) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
}

// simTime converts a wall time to the engine's simulated seconds.
func (s *Scheduler) simTime(t time.Time) float64 { return t.Sub(s.epoch).Seconds() }

// Stream implements Engine.
func (s *Scheduler) Stream(ctx context.Context, plan *Plan, arrival time.Time, emit func(TokenEvent) error) (StreamInfo, error) {
	if len(plan.Tokens) == 0 {
		return StreamInfo{}, nil
	}
	req := Request(plan, s.simTime(arrival))
	st := &schedStream{ch: make(chan schedItem, len(plan.Tokens)+1), arrival: req.Arrival}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return StreamInfo{}, errEngineStopped
	}
	s.nextID++
	req.ID = s.nextID
	s.streams[req.ID] = st
	s.inbox = append(s.inbox, req)
	s.mu.Unlock()
	s.poke()
	// The context is hooked once per stream rather than selected on per
	// token: every stream would otherwise queue on its one shared channel.
	var stopped atomic.Bool
	unhook := context.AfterFunc(ctx, func() {
		stopped.Store(true)
		s.cancel(req.ID, st)
	})
	defer unhook()
	for {
		it, ok := <-st.ch
		if stopped.Load() {
			return StreamInfo{}, ctx.Err()
		}
		if !ok {
			return StreamInfo{}, errEngineStopped
		}
		if it.done {
			return it.info, nil
		}
		// A queued item means this stream fell behind its steps: the
		// next token (or the finish) is already due.
		more := len(st.ch) > 0
		if err := emit(TokenEvent{Index: it.index, SimTime: it.sim, Lag: it.lag, More: more || it.packed, Packed: it.packed}); err != nil {
			s.abort(req.ID)
			return StreamInfo{}, err
		}
	}
}

// cancel aborts a stream whose context ended and wakes it with an empty
// item. A stream still registered has not been sent its finish, so its
// channel has room for one more item.
func (s *Scheduler) cancel(id int64, st *schedStream) {
	s.mu.Lock()
	registered := s.streams[id] == st
	if registered {
		delete(s.streams, id)
		s.aborts = append(s.aborts, id)
		st.ch <- schedItem{}
	}
	s.mu.Unlock()
	if registered {
		s.poke()
	}
}

func (s *Scheduler) abort(id int64) {
	s.mu.Lock()
	delete(s.streams, id)
	s.aborts = append(s.aborts, id)
	s.mu.Unlock()
	s.poke()
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// ResetPrefixCache forgets the core's cached blocks between its steps
// (sched.Core.ResetPrefixCache), refused while requests hold blocks.
func (s *Scheduler) ResetPrefixCache() error {
	done := make(chan error, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errEngineStopped
	}
	s.resets = append(s.resets, done)
	s.mu.Unlock()
	s.poke()
	return <-done
}

func (s *Scheduler) dropPending(id int64) {
	for i, r := range s.pending {
		if r.ID == id {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return
		}
	}
}

// shutdown ends every open stream.
func (s *Scheduler) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, st := range s.streams {
		close(st.ch)
		delete(s.streams, id)
	}
	for _, r := range s.resets {
		r <- errEngineStopped
	}
	s.resets = nil
}

// publish records the core's state for State.
func (s *Scheduler) publish() {
	if s.pd != nil {
		snap, pools := s.pdSnapshot()
		s.mu.Lock()
		s.state, s.pools = snap, pools
		s.mu.Unlock()
		return
	}
	snap := Snapshot{Running: s.core.Running(), Waiting: s.core.Waiting() + len(s.pending), KVUsage: s.core.KVUsage(),
		UsedBlocks: s.core.UsedBlocks(), Preemptions: s.core.Preemptions,
		PrefixQueries: s.core.PrefixQueries, PrefixHits: s.core.PrefixHits}
	if s.core.Config().LoRA != nil {
		snap.RunningAdapters, snap.WaitingAdapters = s.core.Adapters()
		snap.AdapterLoads, _ = s.core.AdapterLoads()
	}
	s.mu.Lock()
	s.state = snap
	s.mu.Unlock()
}

// State returns the engine's state after its latest step.
func (s *Scheduler) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Snapshot is the engine's state for gauges.
type Snapshot struct {
	// RunningAdapters and WaitingAdapters are the LoRA adapters (by
	// number) of the running and the waiting requests, AdapterLoads the
	// adapters loaded into a GPU slot so far (a LoRA model's).
	RunningAdapters, WaitingAdapters []int
	AdapterLoads                     int64
	Running, Waiting                 int
	KVUsage                          float64
	UsedBlocks                       int
	Preemptions                      int64
	PrefixQueries                    int64
	PrefixHits                       int64
}
