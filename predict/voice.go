package predict

import (
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/workload"
)

// VoiceOptions is one level of the call workload: bench's own options
// (of which the client's, Client, Records, Progress, the window hooks,
// Shard and StartAt, have no meaning in virtual time and are ignored), the
// simulated target, and the fleet serving it (see Options).
type VoiceOptions struct {
	bench.VoiceOptions
	Target   Target
	Replicas int
	Routing  Routing
}

// call is one call in progress.
type call struct {
	script  workload.Call
	answers []string
	arrival float64
	turn    int // the turn in flight or next, 1-based
}

// turnSend is a call's next turn, due at a simulated time.
type turnSend struct {
	at   float64
	call *call
}

// turnFlight is one turn inside the core.
type turnFlight struct {
	rec    *record.Record
	call   *call
	answer string
	req    *workload.Request
}

// voiceRun is one level of calls in virtual time.
type voiceRun struct {
	o             VoiceOptions
	fleet         *fleet
	contextLength int
	now           float64
	nextID        int64
	turns         int
	sends         []turnSend // in time order
	inflight      map[int64]*turnFlight
	measured      []record.Record
	tally         bench.VoiceTally
	prefixes      *workload.PrefixTracker
	inProgress    int
	// area integrates calls in progress over time until arrivalsEnd.
	area, areaAt, arrivalsEnd float64
}

// VoiceLevel runs one level of the call workload in virtual time: calls
// arrive on bench's schedule (the same seeded offsets, rebased to the
// first), each sends turn 1 to warm its prefix and every later turn with
// the whole history after its gap, and the result is summarised by
// bench.SummarizeVoice as bench.RunVoice summarises a live one.
// Cancelling ctx stops it, with ctx's error.
func VoiceLevel(ctx context.Context, o VoiceOptions) (*results.Run, error) {
	if err := o.VoiceOptions.Validate(); err != nil {
		return nil, err
	}
	o.Target.Chat = true
	cfg, ctxLen, err := o.Target.Config()
	if err != nil {
		return nil, err
	}
	arrivals, err := workload.NewArrivals(o.Rate, 1, o.Seed)
	if err != nil {
		return nil, err
	}
	var dues []float64
	calls := driver.NewArrivalCount(0, o.Duration, driver.Shard{}, 0)
	for phase := arrivals.Phase(o.Calls, o.Duration); ; {
		rel, ok := phase.Next()
		if !ok {
			break
		}
		calls.Add(rel, int64(o.CallSource.MeasuredTurns(calls.Drawn())))
		dues = append(dues, rel.Seconds())
	}
	v := &voiceRun{o: o, prefixes: workload.NewPrefixTracker(), fleet: newFleet(cfg, max(o.Replicas, 1), o.Routing, o.Seed), contextLength: ctxLen, inflight: map[int64]*turnFlight{}}
	w := calls.Window()
	v.tally.Drawn, v.tally.Arrivals, v.tally.InWindow, v.tally.Offered = int64(calls.Drawn()), w.Arrivals, w.InWindow, w.Offered
	v.tally.OfferedTurns, v.tally.InWindowTurns = calls.Weights()
	if n := len(dues); n > 0 {
		v.tally.LastArrival = dur(dues[n-1])
		v.arrivalsEnd = dues[n-1]
	}
	cutoff := math.Inf(1)
	if o.DrainTimeout > 0 {
		cutoff = v.arrivalsEnd + o.DrainTimeout.Seconds()
	}
	next := 0
	for events := 0; ; events++ {
		if events%cancelCheck == 0 && ctx.Err() != nil {
			v.cutAll()
			return nil, ctx.Err()
		}
		for next < len(dues) && dues[next] <= v.now {
			v.arrive(dues[next], next)
			next++
		}
		for len(v.sends) > 0 && v.sends[0].at <= v.now {
			s := v.sends[0]
			v.sends = v.sends[1:]
			v.send(s.call, s.at)
		}
		v.fleet.start(v.now)
		t := v.fleet.nextEnd()
		if next < len(dues) {
			t = min(t, dues[next])
		}
		if len(v.sends) > 0 {
			t = min(t, v.sends[0].at)
		}
		if !v.fleet.advance(&v.now, t, cutoff, v.complete, v.cutAll) {
			break
		}
	}
	v.progress(v.now)
	v.tally.ArrivalsEnd, v.tally.WindowEnd = dur(v.arrivalsEnd), dur(v.now)
	if v.arrivalsEnd > 0 {
		v.tally.AchievedConcurrency = v.area / v.arrivalsEnd
	}
	bo := o.VoiceOptions
	bo.Config.Predicted = true
	bo.Prefixes = v.prefixes
	res := bench.SummarizeVoice(v.measured, bo, v.tally)
	res.Notes = append(res.Notes, "predicted in virtual time on the simulator's scheduler core: no request was sent")
	return res, nil
}

// progress integrates the calls in progress up to t (while calls arrive).
func (v *voiceRun) progress(t float64) {
	end := min(t, v.arrivalsEnd)
	if end > v.areaAt {
		v.area += float64(v.inProgress) * (end - v.areaAt)
		v.areaAt = end
	}
}

// arrive starts call i at t, or sheds it at the cap.
func (v *voiceRun) arrive(t float64, i int) {
	if v.o.MaxConcurrentCalls > 0 && v.inProgress >= v.o.MaxConcurrentCalls {
		v.tally.Shed++
		return
	}
	v.progress(t)
	v.inProgress++
	v.tally.Started++
	c := &call{script: v.o.CallSource.Call(i), arrival: t, turn: 1}
	v.send(c, t)
}

// send starts the call's current turn at t.
func (v *voiceRun) send(c *call, t float64) {
	k := c.turn
	req := v.o.CallSource.Turn(c.script, k, c.answers)
	rec := &record.Record{Index: v.turns, Tag: k, Scheduled: dur(t), Sent: dur(t), Warmup: k <= c.script.Warmup, Origin: dur(c.arrival), Paused: c.script.PausedBefore(k), MaxTokens: req.MaxTokens,
		PrefixShare: v.prefixes.Share(&req)}
	v.turns++
	plan, err := v.o.Target.Responder.Generate(v.o.Target.genRequest(&req), v.contextLength)
	if err == nil {
		err = engine.CheckFits(v.fleet.core(), plan)
	}
	if err != nil || len(plan.Tokens) == 0 {
		prompt := 0
		if plan != nil {
			prompt = plan.PromptTokens
		}
		v.finish(&turnFlight{rec: rec, call: c}, refuse(rec, err, prompt, t))
		return
	}
	rec.PromptTokens, rec.CompletionTokens = plan.PromptTokens, len(plan.Tokens)
	id := v.nextID
	v.nextID++
	sr := engine.Request(plan, t)
	sr.ID = id
	v.fleet.add(sr)
	rec.ChunkTimes = make([]time.Duration, 0, len(plan.Tokens))
	v.inflight[id] = &turnFlight{rec: rec, call: c, answer: strings.Join(plan.Tokens, ""), req: &req}
}

// complete releases a step's tokens and finishes the turns whose last
// token it was.
func (v *voiceRun) complete(st *sched.Step) {
	stamp(st, func(id int64) *record.Record { return v.inflight[id].rec }, func(id int64) {
		f := v.inflight[id]
		delete(v.inflight, id)
		v.fleet.done(id)
		v.finish(f, st.End)
	})
}

// finish keeps a turn's record (turns after the first are measured) and
// schedules the call's next turn after its gap, or ends the call: after
// its last turn, or after a turn that failed, as a live call ends.
func (v *voiceRun) finish(f *turnFlight, at float64) {
	c := f.call
	if !f.rec.Warmup {
		v.measured = append(v.measured, *f.rec)
	} else {
		v.tally.WarmupTurns++
	}
	if f.rec.Class != "" || c.turn == c.script.Turns() {
		v.progress(at)
		v.inProgress--
		switch {
		case f.rec.Class == "":
			v.tally.Completed++
			v.tally.CallTime += dur(at - c.arrival)
		case f.rec.Class != record.ClassInterrupted:
			v.tally.Failed++
			if f.rec.Warmup {
				v.tally.WarmupFailed++
			}
		}
		return
	}
	c.answers = append(c.answers, f.answer)
	v.prefixes.Share(bench.WithAnswer(f.req, []byte(f.answer)))
	c.turn++
	due := at + c.script.Gaps[c.turn-1].Seconds() + turnaround
	v.sends = insertByTime(v.sends, turnSend{at: due, call: c}, func(s turnSend) float64 { return s.at })
}

// cutAll ends every turn still running and every call still waiting, as
// the drain timeout does.
func (v *voiceRun) cutAll() {
	for _, id := range slices.Sorted(maps.Keys(v.inflight)) {
		f := v.inflight[id]
		v.fleet.abort(id)
		delete(v.inflight, id)
		f.rec.Class, f.rec.Done = record.ClassInterrupted, dur(v.now)
		if !f.rec.Warmup {
			v.measured = append(v.measured, *f.rec)
		}
	}
	v.tally.DrainCut = true
	v.sends = v.sends[:0]
}
