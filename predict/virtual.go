package predict

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// Virtual runs levels in virtual time on the simulator's scheduler core
// (bench.Runner): the one driver, its clock the simulation's, sending to
// a simulated fleet of the target's model, every measured record into
// the summary a live level uses. Nothing is sent and nothing sleeps.
type Virtual struct {
	Target Target
	// Replicas, when above 1, serves every level from that many
	// independent replicas of the model behind a router with the Routing
	// policy.
	Replicas int
	Routing  Routing
	// Memo, when set, keeps what the content side said for each request
	// of a level of requests, for a level run many times with the same
	// workload (a plan's search, a calibration's replays).
	Memo *Memo
	// NoHistograms leaves the encoded histograms out of the results: for
	// results only compared, never written.
	NoHistograms bool
	// NoITL keeps no chunk times, so no inter-token latency is measured:
	// a plan whose SLO does not bound it predicts faster.
	NoITL bool
	// Abandon, when set, sees every measured record as it ends; once it
	// says true the level stops there, marked interrupted (a plan's
	// search gives up on a level that cannot meet its SLO any more).
	Abandon func(*record.Record) bool
	// Notes are added to every result (how the model's tuning fitted).
	Notes []string
	// MemoryBudget is the heap at which a level stops, what it predicted
	// kept (0: MemoryBudget()); OutOfMemory, when set, is called when one
	// does.
	MemoryBudget int64
	OutOfMemory  func()
	// Tally, when set, counts the level's scheduler steps by what bounded
	// them (what limits a replica).
	Tally *StepTally
	// Disagg, when set, serves every level disaggregated so (a plan's
	// split), whatever the models file says.
	Disagg *sched.DisaggConfig
}

// recordsEpoch is the instant a predicted level's records count from:
// their instants are simulated time since the Unix epoch, every level
// starting at zero.
var recordsEpoch = time.Unix(0, 0)

// StreamGap is the gap between a predicted closed loop's streams' first
// requests: what knee's live client takes to start each (about 25 ms for
// 64 streams against knee sim, dialling included).
const StreamGap = 400 * time.Microsecond

// Probe implements bench.Prober with the target's own answer.
func (v *Virtual) Probe(r *workload.Request, rec *record.Record) { v.Target.Probe(r, rec) }

// Run implements bench.Runner: the level in virtual time, warm-up first,
// its measured window summarised as a live level's is. Cancelling ctx
// stops it at once: what it predicted so far comes back marked
// interrupted, as a live level's does. A level of calls is always sent to
// the chat endpoint, as calls are.
func (v *Virtual) Run(ctx context.Context, lv *bench.Level) (*results.Run, error) {
	if err := lv.Work.Validate(); err != nil {
		return nil, err
	}
	srv, target, err := v.server(lv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	budget := v.MemoryBudget
	if budget == 0 {
		budget = MemoryBudget()
	}
	srv.guard, srv.stop = newMemGuard(budget), func() { cancel(ErrOutOfMemory) }
	prefixes := workload.NewPrefixTracker()
	level := lv.Summary(prefixes, v.NoHistograms)
	level.Config.Predicted = true
	sum := summary.New(level, 1)
	records := lv.RecordWriter(recordsEpoch)
	measured := sum.Add
	if v.Abandon != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		measured = func(r *record.Record) {
			sum.Add(r)
			if v.Abandon(r) {
				cancel()
			}
		}
	}
	d := driver.New(driver.Options{Clock: srv, Sender: srv, Records: records, Measured: measured, Prefixes: prefixes,
		Turnaround: Turnaround, StreamGap: StreamGap, ToolRounds: target.ToolRounds, ToolResult: target.ToolResult, Tools: target.ToolList})
	win, energy := srv.meterWindow(target, v.Replicas)
	out, err := lv.Drive(ctx, d, sum, win)
	if err != nil {
		return nil, err
	}
	records.Flush()
	res := out.Result(health.Report{})
	res.Phases = srv.fleet.phases()
	if g := energy(); g != nil {
		res.GPU = g
		g.PerWork(res)
	}
	res.Health = results.Health{Verdict: results.VerdictVirtual}
	res.Notes = append(res.Notes, "predicted in virtual time on the simulator's scheduler core: no request was sent")
	res.Interrupted = ctx.Err() != nil
	if errors.Is(context.Cause(ctx), ErrOutOfMemory) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("stopped at %.1f s of virtual time: %v (%s): what it predicted so far is kept; predict fewer streams, a lower rate or a shorter window",
			srv.now.Seconds(), ErrOutOfMemory, Bytes(float64(budget))))
		if v.OutOfMemory != nil {
			v.OutOfMemory()
		}
	}
	lv.Finish(res)
	res.Notes = append(res.Notes, v.Notes...)
	return res, nil
}

// server is the virtual server for the level: a call's turns are chat and
// keep no memo (their answers shape the next turn).
func (v *Virtual) server(lv *bench.Level) (*simServer, Target, error) {
	target, memo, seed := v.Target, v.Memo, uint64(0)
	switch w := lv.Work.(type) {
	case bench.Requests:
		seed = w.Load.Seed
	case bench.Calls:
		memo, seed = nil, w.Load.Seed
		if !target.kind().Chat() {
			target.Endpoint = kind.Default
		}
	}
	cfg, ctxLen, err := target.Config()
	if err != nil {
		return nil, target, err
	}
	srv := newSimServer(target, cfg, ctxLen, v.Replicas, v.Routing, seed, memo)
	srv.noChunks, srv.tally = v.NoITL, v.Tally
	dc, ok := target.Disagg(seed)
	if v.Disagg != nil {
		dc, ok = *v.Disagg, true
		dc.Seed = seed
	}
	if ok {
		if v.Replicas > 1 {
			return nil, target, fmt.Errorf("model %s is served disaggregated: its models file sizes its pools (prefill_replicas, decode_replicas), not --replicas", target.Model)
		}
		srv.fleet = newPDFleet(dc)
	}
	return srv, target, nil
}
