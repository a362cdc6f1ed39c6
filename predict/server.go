package predict

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/model"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
	"github.com/kneebench/knee/workload/wire"
)

// refusedCost is the virtual time a refused request takes to come back.
// Without it a closed-loop stream whose requests all fail would send
// again at the same instant forever.
const refusedCost = 100 * time.Microsecond

// Turnaround is how long after a request ends its client can act on it
// (driver.Options.Turnaround). Its size hardly matters; that it is not
// zero does: the engine starts its next step the instant the last one
// ends, so, as against a live server, a follow-up can never be in the
// step that starts when its predecessor finished.
const Turnaround = time.Microsecond

// simServer is the simulated server as the driver sees it: a Clock whose
// time is the simulation's, which runs the fleet's scheduler cores step by
// step as it advances, and a Sender that queues requests in them after the
// content side (the simulator's own) has said what they are.
type simServer struct {
	target        Target
	memo          *Memo
	fleet         servers
	contextLength int
	now           time.Duration
	woken         bool
	flights       map[int64]*driver.Flight
	nextID        int64
	// noChunks keeps no chunk times (Options.NoITL).
	noChunks bool
	// energy, when set, books each step's energy (meterWindow).
	energy *energyMeter
	// guard, when set, stops the level (through stop) once the heap
	// outgrows the memory budget.
	guard *memGuard
	stop  func()
	// reasoning, when set, makes the model think before it answers, as
	// knee sim's does (model.Think); tools, when set, makes it call the
	// tools requests offer (model.CallTool).
	reasoning *model.ReasoningSpec
	tools     *model.ToolSpec
	// vision, when set, counts requests' images as knee sim does, with
	// its encoder cache.
	vision  *model.VisionSpec
	encoded model.EncoderCache
	// spec is the model's, for its adapters and scheduling policy.
	spec *model.ModelSpec
	// tally, when set, counts every step by what bounded it.
	tally *StepTally
	// words is the buffer a request said as words is drawn into, and
	// freeIDs the token id slices of ended requests, for the next ones'.
	words   []uint16
	freeIDs [][]uint64
	// freeKept is the ids freeIDs can hold; wordsSaid says a request was
	// said as words, which the free slices are kept for.
	freeKept  int
	wordsSaid bool
	// known keeps long messages' ids across a call's turns.
	known content.IDCache
	// out says when the model's tokens leave (sched.Outputs).
	out sched.Outputs
}

// maxFreeIDs bounds the ids the slices kept for reuse hold: 8 MB, a few
// hundred long prompts' worth.
const maxFreeIDs = 1 << 20

func newSimServer(t Target, cfg sched.Config, contextLength, replicas int, routing Routing, seed uint64, memo *Memo) *simServer {
	s := &simServer{target: t, memo: memo, fleet: newFleet(cfg, max(replicas, 1), routing, seed), contextLength: contextLength,
		flights: map[int64]*driver.Flight{}, out: cfg.Outputs()}
	spec, err := t.model()
	if err == nil {
		s.spec = spec
	}
	if err != nil || !t.kind().Chat() {
		return s
	}
	if r := spec.Reasoning.ForRequest(t.Effort, t.NoThinking); r != nil && r.Tokens > 0 {
		// A reasoning model's answers are its own: no memo shared with
		// candidates that may not think.
		s.reasoning, s.memo = r, nil
	}
	if spec.Tools != nil {
		s.tools, s.memo = spec.Tools, nil
	}
	if spec.Vision != nil {
		s.vision, s.memo = spec.Vision, nil
	}
	return s
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
	if s.guard.over() {
		s.stop()
		return true
	}
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
	if err == nil && said.maxTokens > 0 {
		// A kept answer was said for any context: this model's is checked
		// here, as the server would.
		n := said.maxTokens
		err = content.CheckContext(said.prompt, &n, s.contextLength)
	}
	if err == nil {
		err = s.fleet.fits(said.prompt, said.output)
	}
	if err != nil || said.output == 0 {
		refuse(rec, err, said.prompt, s.now)
		f.Done()
		return
	}
	rec.PromptTokens, rec.CompletionTokens = said.prompt, said.output
	if said.inputs > 0 {
		rec.Pooled, rec.Inputs, rec.CompletionTokens, rec.MaxTokens = true, said.inputs, 0, 0
	}
	if said.thinking > 0 {
		// stamp books the first ReasoningTokens tokens as thought.
		rec.ReasoningTokens, rec.ReasoningReported, rec.FinishLength = said.thinking, said.reported, said.length
	}
	if said.tool != "" {
		rec.ToolChunks, rec.ToolFinish = said.output-said.thinking, !said.length
	}
	if f.KeepText && said.plan != nil {
		answer := strings.Join(said.plan.Tokens[said.thinking:], "")
		if said.tool != "" {
			rec.ToolCalls = append(rec.ToolCalls[:0], record.ToolCall{ID: "call_" + strconv.FormatInt(s.nextID, 10), Name: said.tool, Arguments: answer})
			answer = ""
		}
		rec.Text = append(rec.Text[:0], answer...)
	}
	id := s.nextID
	s.nextID++
	sr := said.sr
	sr.Arrival, sr.ID, sr.Owner = s.now.Seconds(), id, f
	s.fleet.add(sr, said.routeKey)
	if !s.noChunks {
		rec.ChunkTimes = slices.Grow(rec.ChunkTimes[:0], sr.OutputLen)
	}
	s.flights[id] = f
}

// say is what the content side says to f's request: from the level's memo
// when it has one (measured single requests asking for max_tokens only: a
// warm-up's index may be a trace's line too, a call's turns depend on its
// answers, and an answer with no max_tokens runs to the model's context).
func (s *simServer) say(f *driver.Flight) said {
	bs := s.fleet.blockSize()
	m, kept, ok := s.memoFor(f, bs)
	if ok {
		return kept
	}
	req, asWords := s.requestOf(f)
	context := s.contextLength
	if m != nil {
		if req.MaxTokens <= 0 {
			m = nil
		} else {
			context = anyContext
		}
	}
	sd := &said{tag: f.Rec.Tag, maxTokens: req.MaxTokens, share: f.Rec.PrefixShare, class: f.Rec.MixClass}
	if s.target.kind().Pooled() {
		return *s.sayPooled(req, sd, context)
	}
	plan, err := s.generate(f, req, asWords, sd, context)
	if err == nil {
		err = s.route(req, plan)
	}
	sd.err = err
	if plan != nil {
		sd.prompt, sd.output = plan.PromptTokens, len(plan.Tokens)
		sd.length, sd.tool = plan.FinishReason == "length", plan.ToolName
	}
	if err == nil {
		s.keepPlan(sd, plan, m != nil, bs)
	}
	if m != nil {
		m.put(f.Rec.Index, sd)
	}
	return *sd
}

// memoFor is the level's memo for f (nil when f's answer is not kept)
// and, when the memo holds f's answer said under this block size, that
// answer.
func (s *simServer) memoFor(f *driver.Flight, bs int) (*Memo, said, bool) {
	m := s.memo
	if !f.Measured() || f.IsTurn() || m == nil {
		return nil, said{}, false
	}
	sd, ok := m.get(f.Rec.Index)
	if !ok {
		return m, said{}, false
	}
	if sd.sr.Chain == nil || sd.sr.ChainBlock == bs {
		f.Rec.Tag, f.Rec.PrefixShare, f.Rec.MixClass = sd.tag, sd.share, sd.class
		return m, sd, true
	}
	// A chain kept under another block size is no use to this model:
	// said afresh, and not kept.
	return nil, said{}, false
}

// requestOf is f's request, as words when it can be: what is said needs
// the prompt's tokens and hash, which the words give without the text
// being written.
func (s *simServer) requestOf(f *driver.Flight) (*workload.Request, bool) {
	if !s.target.kind().Pooled() {
		req, words, asWords := f.RequestWords(s.words[:0])
		s.words = words
		if asWords {
			return req, true
		}
	}
	return f.Request(), false
}

// generate is the plan of f's answer: its tokens, images, tool call and
// thinking.
func (s *simServer) generate(f *driver.Flight, req *workload.Request, asWords bool, sd *said, context int) (*model.Plan, error) {
	gen := s.target.genRequest(req)
	gen.Known = &s.known
	if asWords {
		gen.Words, gen.Vocab = s.words, fillerTable()
		// A single request's answer is read for its length alone: no
		// turn sends it again, and no tool or thought is drawn from it.
		gen.AnswerUnread = !f.KeepText && s.tools == nil && s.reasoning == nil
		s.wordsSaid = true
		if n := len(s.freeIDs); n > 0 {
			gen.IDs, s.freeIDs = s.freeIDs[n-1], s.freeIDs[:n-1]
			s.freeKept -= cap(gen.IDs)
		}
	}
	plan, err := s.target.Responder.Generate(gen, context)
	if urls := imagesOf(req); err == nil && len(urls) > 0 {
		if s.vision == nil {
			err = fmt.Errorf("model %s is not a multimodal model: it takes no images", s.target.Model)
		} else {
			err = model.AddImages(plan, urls, s.vision, &s.encoded, gen.MaxTokens, context)
		}
	}
	if err == nil && s.tools != nil {
		model.CallTool(plan, s.tools, gen, context)
	}
	if r := s.reasoning; err == nil && s.target.kind().Chat() {
		if r = model.Scripted(plan, r, s.target.NoThinking); r != nil {
			model.Think(plan, r, gen.MaxTokens, context)
			sd.thinking, sd.reported = min(plan.ThoughtTokens, len(plan.Tokens)), r.ReportTokens
		}
	}
	return plan, err
}

// keepPlan makes sd's engine request; a memo's answer keeps its ids'
// chained block hashes (all the cache reads) rather than the ids.
func (s *simServer) keepPlan(sd *said, plan *model.Plan, memo bool, bs int) {
	sd.sr = engine.Request(plan, 0)
	if memo || s.fleet.routesByPrefix() {
		// Kept, a memo's answer may be routed by another fleet.
		sd.routeKey = prefixKey(sd.sr.IDs)
	}
	if !memo {
		sd.plan = plan
	} else if sd.sr.IDs != nil {
		sd.sr.PromptLen = len(sd.sr.IDs) - sd.sr.OutputLen
		sd.sr.Chain, sd.sr.ChainBlock = sched.ChainOf(sd.sr.IDs, bs, sd.sr.Adapter), bs
		sd.sr.IDs = nil
	}
}

// fillerTable is the synthetic prompts' words' table, built once.
var fillerTable = sync.OnceValue(func() *content.WordTable {
	t, ok := content.NewWordTable(workload.FillerVocabulary())
	if !ok {
		panic("predict: a filler word holds white space")
	}
	return t
})

// anyContext is the context an answer kept in a memo is said for: none
// limits it (each model's is checked when it is sent).
const anyContext = 1 << 30

// complete releases a step's tokens to their requests and ends the
// requests whose last token it was.
func (s *simServer) complete(st *sched.Step) {
	if s.tally != nil {
		s.tally.add(st)
	}
	if s.energy != nil {
		s.energy.step(st)
	}
	stamp(st, !s.noChunks, s.out, func(q *sched.Seq) *record.Record { return &q.Owner.(*driver.Flight).Rec }, func(q *sched.Seq) {
		f := q.Owner.(*driver.Flight)
		if q.IDs != nil && s.wordsSaid && s.freeKept+cap(q.IDs) <= maxFreeIDs {
			// Its ids are done with: the core reads them only while it
			// runs, and nothing else kept them (a memo keeps chains).
			s.freeIDs, s.freeKept = append(s.freeIDs, q.IDs[:0]), s.freeKept+cap(q.IDs)
		}
		delete(s.flights, q.ID)
		s.fleet.ended(q.ID, f.Measured())
		f.Done()
	})
}

// Abort implements driver.Sender: every request still running ends now,
// as the drain's cut does, in the order they were sent.
func (s *simServer) Abort() {
	for _, id := range slices.Sorted(maps.Keys(s.flights)) {
		f := s.flights[id]
		s.fleet.abort(id, s.now)
		delete(s.flights, id)
		f.Rec.Class, f.Rec.Done = record.ClassInterrupted, s.now
		f.Done()
	}
}

// sayPooled is what a pooling model says to req: its inputs prefilled,
// one pooled result (model.PoolPlan), as knee sim answers embeddings.
func (s *simServer) sayPooled(req *workload.Request, sd *said, context int) *said {
	inputs := s.target.pooledInputs(req)
	plan := model.PoolPlan(inputs, true)
	sd.inputs, sd.maxTokens = len(inputs), 0
	sd.prompt, sd.output = plan.PromptTokens, len(plan.Tokens)
	if sd.err = content.CheckContext(plan.PromptTokens, nil, context); sd.err == nil {
		sd.sr = engine.Request(plan, 0)
		sd.routeKey = prefixKey(sd.sr.IDs)
	}
	return sd
}

// imagesOf is a request's images, in order.
func imagesOf(r *workload.Request) []string {
	var out []string
	for _, m := range r.Messages {
		out = append(out, m.Images...)
	}
	return out
}

// route gives a request's plan its adapter (a mix class's model that is
// one of the model's LoRA adapters) and its priority, as knee sim's
// server reads them, with the same refusals.
func (s *simServer) route(req *workload.Request, plan *model.Plan) error {
	if req.Model != "" && req.Model != s.target.Model {
		if s.spec == nil || s.spec.LoRA == nil || !slices.Contains(s.spec.LoRA.Adapters, req.Model) {
			return fmt.Errorf("the model %s does not exist: it is neither %s nor one of its LoRA adapters", req.Model, s.target.Model)
		}
		plan.Adapter = slices.Index(s.spec.LoRA.Adapters, req.Model) + 1
	}
	for _, f := range req.Fields {
		if f.Key != "priority" {
			continue
		}
		if err := json.Unmarshal(f.Value, &plan.Priority); err != nil {
			return fmt.Errorf("priority %s is not a whole number", f.Value)
		}
		if plan.Priority != 0 && (s.spec == nil || s.spec.SchedulingPolicy != "priority") {
			return fmt.Errorf("got priority %d but priority scheduling is not enabled (scheduling_policy: priority)", plan.Priority)
		}
	}
	return nil
}

// pooledInputs are the texts a pooling kind's request is counted by, as
// knee sim reads them: each input, or a query's pairs with its documents.
func (t Target) pooledInputs(req *workload.Request) []string {
	inputs := req.Inputs
	if len(inputs) == 0 {
		inputs = []string{req.Text()}
	}
	if t.kind().Input == kind.Pairs {
		query, docs := wire.Pairs(req.Inputs, req.Text())
		inputs = make([]string, len(docs))
		for i, d := range docs {
			inputs[i] = query + "\n" + d
		}
	}
	return inputs
}
