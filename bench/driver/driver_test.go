package driver

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

const ms = time.Millisecond

// expectedDues are the measured window's arrivals of an open loop: the
// seeded schedule rebased to its first arrival, those before span.
func expectedDues(t *testing.T, rate, burstiness float64, seed uint64, span time.Duration) []time.Duration {
	t.Helper()
	offs, err := workload.Schedule(rate, burstiness, seed, int(rate*span.Seconds()*3)+20)
	if err != nil {
		t.Fatal(err)
	}
	var dues []time.Duration
	for _, o := range offs {
		if o-offs[0] >= span {
			break
		}
		dues = append(dues, o-offs[0])
	}
	return dues
}

// bothClocks runs sc on the virtual and the wall clock, checks that they
// measured the very same records, and returns the virtual outcome.
func bothClocks(t *testing.T, sc scenario) outcome {
	t.Helper()
	v, l := sc.virtual(t), sc.live(t)
	if v.err != nil || l.err != nil {
		t.Fatalf("virtual: %v, live: %v", v.err, l.err)
	}
	if len(v.recs) != len(l.recs) {
		t.Fatalf("virtual measured %d requests, live %d", len(v.recs), len(l.recs))
	}
	for i := range v.recs {
		if !reflect.DeepEqual(v.recs[i], l.recs[i]) {
			t.Fatalf("record %d:\nvirtual %+v\nlive    %+v", i, v.recs[i], l.recs[i])
		}
	}
	if v.inFlight != 0 || l.inFlight != 0 || v.sent != l.sent || v.sent < int64(len(v.recs)) {
		t.Fatalf("counts: virtual sent %d (%d in flight), live %d (%d)", v.sent, v.inFlight, l.sent, l.inFlight)
	}
	if v.window != l.window || v.tally != l.tally {
		t.Fatalf("virtual window %+v tally %+v\nlive window %+v tally %+v", v.window, v.tally, l.window, l.tally)
	}
	return v
}

// TestOpenLoopSendsOnSchedule: every arrival of the window goes out when
// it is due, as request k of the schedule, and the window counts them by
// the window rules.
func TestOpenLoopSendsOnSchedule(t *testing.T) {
	dues := expectedDues(t, 10, 1, 7, 10*time.Second)
	out := bothClocks(t, scenario{service: constant(50 * ms), requests: &Requests{Source: fixed,
		Load: Load{Rate: 10, Burstiness: 1, Seed: 7, Duration: 10 * time.Second}}})
	if len(out.recs) != len(dues) {
		t.Fatalf("%d requests sent, the schedule has %d in the window", len(out.recs), len(dues))
	}
	for i, r := range out.recs {
		if r.Index != i || r.Scheduled != dues[i] || r.Sent != dues[i] || r.Lateness != 0 || r.Waited || r.Class != "" {
			t.Fatalf("request %d: %+v, want index %d due and sent at %v", i, r, i, dues[i])
		}
	}
	w := out.window
	if w.Arrivals != int64(len(dues)) || w.InWindow != w.Arrivals || w.SchedEnd != 10*time.Second || w.Offered != float64(len(dues))/10 {
		t.Errorf("window %+v", w)
	}
	if w.End < dues[len(dues)-1]+50*ms || w.DrainCut || w.Unsent != 0 {
		t.Errorf("window %+v: it ends when the last request has", w)
	}
}

// TestCountBoundedWindowEndsAtItsLastArrival: n requests are sent, and the
// window (over which the offer is judged) ends at the last of them.
func TestCountBoundedWindowEndsAtItsLastArrival(t *testing.T) {
	out := bothClocks(t, scenario{service: constant(10 * ms), requests: &Requests{Source: fixed,
		Load: Load{Rate: 20, Burstiness: 1, Seed: 1, Requests: 12}}})
	if len(out.recs) != 12 || out.window.Arrivals != 12 || out.window.InWindow != 11 || out.window.SchedEnd != out.recs[11].Scheduled {
		t.Errorf("%d sent, window %+v", len(out.recs), out.window)
	}
}

// TestSlotsWaitInOrderAndUnsentAreCounted: with a cap of two in flight
// and a server far slower than the arrivals, arrivals wait for a slot in
// order, never more than two run at once, a waited request is measured
// from when it was due, and those still waiting at the window's end (and
// every later one) are counted unsent.
func TestSlotsWaitInOrderAndUnsentAreCounted(t *testing.T) {
	dues := expectedDues(t, 10, 1, 5, 5*time.Second)
	out := bothClocks(t, scenario{service: constant(990 * ms), requests: &Requests{Source: fixed,
		Load: Load{Rate: 10, Burstiness: 1, Seed: 5, Duration: 5 * time.Second, MaxConcurrency: 2}}})
	w := out.window
	if w.Unsent == 0 || int64(len(out.recs))+w.Unsent != w.Arrivals || w.Arrivals != int64(len(dues)) {
		t.Fatalf("%d sent, window %+v, %d arrivals scheduled", len(out.recs), w, len(dues))
	}
	waited := 0
	for i, r := range out.recs {
		if r.Scheduled != dues[i] || r.Sent < r.Scheduled || (!r.Waited && r.Sent != r.Scheduled) || r.Lateness != 0 {
			t.Errorf("request %d: %+v (due %v)", i, r, dues[i])
		}
		if i > 0 && r.Sent < out.recs[i-1].Sent {
			t.Errorf("request %d sent at %v, before request %d at %v", i, r.Sent, i-1, out.recs[i-1].Sent)
		}
		if r.Waited {
			waited++
		}
		running := 0
		for _, o := range out.recs {
			if o.Sent <= r.Sent && r.Sent < o.Done {
				running++
			}
		}
		if running > 2 {
			t.Errorf("%d requests in flight when request %d was sent", running, i)
		}
	}
	if waited == 0 {
		t.Error("no request waited for a slot")
	}
}

// TestDrainCutsStragglers: what is still running DrainTimeout after the
// window's end is cut then, counted as interrupted.
func TestDrainCutsStragglers(t *testing.T) {
	out := bothClocks(t, scenario{service: constant(3050 * ms), requests: &Requests{Source: fixed,
		Load: Load{Rate: 5, Burstiness: 1000, Seed: 1, Duration: 2 * time.Second, DrainTimeout: time.Second}}})
	if !out.window.DrainCut || len(out.recs) == 0 || out.window.End != 3*time.Second {
		t.Fatalf("window %+v, %d requests", out.window, len(out.recs))
	}
	for _, r := range out.recs {
		if r.Class != record.ClassInterrupted || r.Done != 3*time.Second {
			t.Errorf("request %d: %s at %v, want cut at 3 s", r.Index, r.Class, r.Done)
		}
	}
}

// TestClosedLoop: each stream sends its next request as its last ends,
// until the span is up; the warm-up's requests come first, so the window's
// are numbered after them.
func TestClosedLoop(t *testing.T) {
	out := bothClocks(t, scenario{service: constant(100 * ms), requests: &Requests{Source: fixed,
		Load: Load{Concurrency: 3, Duration: time.Second, Warmup: -1}}})
	if len(out.recs) != 30 {
		t.Fatalf("%d requests, want 3 streams × 10", len(out.recs))
	}
	for i, r := range out.recs {
		wantAt := 100*ms + time.Duration(i/3)*100*ms
		if r.Index != 3+i || r.Scheduled != wantAt || r.Sent != wantAt {
			t.Errorf("request %d: index %d sent at %v, want %d at %v", i, r.Index, r.Sent, 3+i, wantAt)
		}
	}
	if out.window.Start != 100*ms || out.window.End != 1100*ms || out.window.Warmup != 3 {
		t.Errorf("window %+v", out.window)
	}
	counted := bothClocks(t, scenario{service: constant(100 * ms), requests: &Requests{Source: fixed,
		Load: Load{Concurrency: 2, Requests: 5}}})
	if len(counted.recs) != 5 || counted.recs[4].Index != 4 {
		t.Errorf("a count of 5 on 2 streams sent %d", len(counted.recs))
	}
}

// TestShardsSendTheirPartOfOneSchedule: the shards of a load together send
// exactly what one driver does, request k at its time, each only its own.
func TestShardsSendTheirPartOfOneSchedule(t *testing.T) {
	for _, load := range []Load{
		{Rate: 50, Burstiness: 1, Seed: 3, Duration: 2 * time.Second, Warmup: 2},
		{Concurrency: 6, Duration: time.Second, Warmup: -1},
	} {
		// Each measured from its own window's start: shards align their
		// windows with StartAt, which a virtual clock has not.
		rebase := func(o outcome) []record.Record {
			for i := range o.recs {
				o.recs[i].Scheduled -= o.window.Start
			}
			return o.recs
		}
		whole := scenario{service: constant(100 * ms), requests: &Requests{Source: fixed, Load: load}}.virtual(t)
		whole.recs = rebase(whole)
		var union []record.Record
		for i := range 3 {
			l := load
			l.Shard = Shard{Index: i, Count: 3}
			part := scenario{service: constant(100 * ms), requests: &Requests{Source: fixed, Load: l}}.virtual(t)
			for _, r := range rebase(part) {
				if r.Index%3 != i && load.Rate > 0 {
					t.Errorf("shard %d sent arrival %d", i, r.Index)
				}
			}
			union = append(union, part.recs...)
		}
		union = sorted(union)
		if len(union) != len(whole.recs) {
			t.Fatalf("%+v: shards sent %d, one driver %d", load, len(union), len(whole.recs))
		}
		for i := range union {
			if union[i].Index != whole.recs[i].Index || union[i].Scheduled != whole.recs[i].Scheduled {
				t.Errorf("%+v: shards' request %d at %v, one driver's %d at %v", load, union[i].Index, union[i].Scheduled,
					whole.recs[i].Index, whole.recs[i].Scheduled)
			}
		}
	}
}

// TestCallsTurnAfterTheirGaps: a call sends its warm-up turn on arrival,
// then each turn its gap after the last ended, with the history; turns 2
// and 3 are measured, and the tally counts the calls.
func TestCallsTurnAfterTheirGaps(t *testing.T) {
	out := bothClocks(t, scenario{service: constant(100 * ms), calls: &Calls{Source: threeTurns{},
		Load: CallLoad{Rate: 1, Calls: 5, Seed: 2}}})
	tl := out.tally
	if len(out.recs) != 10 || tl.Started != 5 || tl.Completed != 5 || tl.WarmupTurns != 5 || tl.CallTime != 5*5300*ms {
		t.Fatalf("%d turns, tally %+v", len(out.recs), tl)
	}
	if tl.Arrivals != 5 || tl.InWindow != 4 || tl.OfferedTurns != 10 || tl.InWindowTurns != 8 {
		t.Errorf("tally %+v", tl)
	}
	for _, r := range out.recs {
		want := r.Origin + 2100*ms
		if r.Tag == 3 {
			want = r.Origin + 5200*ms
		}
		if r.Scheduled != want || r.Sent != want || r.Warmup {
			t.Errorf("call %d turn %d: due %v, want %v", r.Call, r.Tag, r.Scheduled, want)
		}
		if r.Tag == 3 && !(r.PrefixShare > 0.5) {
			t.Errorf("call %d turn 3 shares %.2f of its prompt with turn 2's", r.Call, r.PrefixShare)
		}
	}
}

// TestCallsShedAtTheCap: arrivals past the cap on calls in progress are
// shed and counted.
func TestCallsShedAtTheCap(t *testing.T) {
	out := bothClocks(t, scenario{service: constant(100 * ms), calls: &Calls{Source: threeTurns{},
		Load: CallLoad{Rate: 1, Calls: 8, Seed: 2, MaxConcurrentCalls: 1}}})
	tl := out.tally
	if tl.Shed == 0 || tl.Started+tl.Shed != 8 || int64(len(out.recs)) != 2*tl.Started {
		t.Errorf("tally %+v, %d turns", tl, len(out.recs))
	}
}

// TestCallsDrainDropsTurnsToCome: once the drain is over, turns still to
// come are never sent, and the calls are not counted completed.
func TestCallsDrainDropsTurnsToCome(t *testing.T) {
	out := bothClocks(t, scenario{service: constant(100 * ms), calls: &Calls{Source: threeTurns{},
		Load: CallLoad{Rate: 100, Calls: 2, Seed: 2, DrainTimeout: time.Second}}})
	tl := out.tally
	if !tl.DrainCut || tl.Started != 2 || tl.Completed != 0 || tl.WarmupTurns != 2 || len(out.recs) != 0 {
		t.Errorf("tally %+v, %d measured turns", tl, len(out.recs))
	}
}

// TestCancelCutsAndStops: a cancelled level sends nothing more and cuts
// what is in flight when it is cancelled.
func TestCancelCutsAndStops(t *testing.T) {
	out := bothClocks(t, scenario{service: constant(2 * time.Second), cancelAt: 3 * time.Second,
		requests: &Requests{Source: fixed, Load: Load{Rate: 10, Burstiness: 1, Seed: 9, Duration: 10 * time.Second}}})
	cut := 0
	for _, r := range out.recs {
		switch {
		case r.Sent >= 3*time.Second:
			t.Errorf("request %d sent at %v, after the cancel", r.Index, r.Sent)
		case r.Sent+2*time.Second > 3*time.Second:
			if r.Class != record.ClassInterrupted || r.Done != 3*time.Second {
				t.Errorf("request %d in flight at the cancel: %s at %v", r.Index, r.Class, r.Done)
			}
			cut++
		case r.Class != "":
			t.Errorf("request %d ended before the cancel as %s", r.Index, r.Class)
		}
	}
	if cut == 0 || out.window.DrainCut {
		t.Errorf("%d cut, window %+v", cut, out.window)
	}
	// The window ran 3 s of its 10: its offered rate is its arrivals over
	// those 3 s, about the 10/s asked, not over the 10 s it never reached
	// (3/s, a false "-70%").
	if o := out.window.Offered; o < 7 || o > 13 {
		t.Errorf("an interrupted window offered %.2f/s, want about the 10/s asked", o)
	}
}

// TestWarmupRecordsAreMarked: every request is written to the records, the
// warm-up's marked as such and numbered before the window's.
func TestWarmupRecordsAreMarked(t *testing.T) {
	for _, load := range []Load{
		{Concurrency: 2, Requests: 4, Warmup: -1},
		{Rate: 10, Burstiness: 1, Seed: 1, Requests: 4, Warmup: 3},
	} {
		var buf bytes.Buffer
		sim := &simServer{service: constant(10 * ms)}
		w := record.NewWriter(&buf, time.Unix(0, 0), nil)
		d := New(Options{Clock: sim, Sender: sim, Records: w})
		if _, err := d.RunRequests(context.Background(), Requests{Source: fixed, Load: load}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		lines, err := results.ReadRecords(&buf)
		if err != nil {
			t.Fatal(err)
		}
		warm := load.DefaultWarmup()
		if len(lines) != warm+4 {
			t.Fatalf("%+v: %d records, want %d", load, len(lines), warm+4)
		}
		for _, l := range lines {
			if l.Warmup != (l.Index < warm) {
				t.Errorf("%+v: record %d marked warm-up %v", load, l.Index, l.Warmup)
			}
		}
	}
}

// lateClock is the simulated clock of a starved client: every wait
// returns 50 ms past what it asked.
type lateClock struct{ *simServer }

func (c lateClock) Wait(ctx context.Context, until time.Duration, precise bool) bool {
	if until < Never-50*ms {
		until += 50 * ms
	}
	return c.simServer.Wait(ctx, until, precise)
}

// TestStarvedOpenLoopWaitsForNoSlot: an open loop with no cap whose
// client woke late sends its overdue arrivals late, counted as late from
// when they were due, never as having waited for a slot it never lacked
// (a starved run once read "41 waited for a slot").
func TestStarvedOpenLoopWaitsForNoSlot(t *testing.T) {
	sim := &simServer{service: constant(10 * ms)}
	k := &keep{}
	d := New(Options{Clock: lateClock{sim}, Sender: sim, Measured: k.measured})
	lv := Requests{Source: fixed, Load: Load{Rate: 100, Burstiness: 1, Seed: 3, Duration: 2 * time.Second}}
	if _, err := d.RunRequests(context.Background(), lv); err != nil {
		t.Fatal(err)
	}
	late := 0
	for _, r := range k.recs {
		if r.Waited {
			t.Fatalf("request %d waited for a slot in a loop without a cap", r.Index)
		}
		if r.Lateness >= 10*ms {
			late++
		}
	}
	if late < len(k.recs)/2 {
		t.Errorf("only %d of %d requests were counted late on a clock 50 ms late", late, len(k.recs))
	}
}

// slowHandOff is the sender of a starved client: each request goes out
// 20 ms after the dispatcher handed it over.
type slowHandOff struct{ *simServer }

func (s slowHandOff) Send(ctx context.Context, f *Flight) {
	s.now += 20 * ms
	s.simServer.Send(ctx, f)
}

// TestStarvedClosedLoopCountedLate: a closed loop's stream is due again
// the moment its last request ended, so a client too slow to hand its
// next request over sends it late, counted so (and judged by the health
// rules as an open loop's lateness is); a client that keeps up is never
// late.
func TestStarvedClosedLoopCountedLate(t *testing.T) {
	for _, c := range []struct {
		name    string
		sender  func(*simServer) Sender
		starved bool
	}{
		{"on time", func(s *simServer) Sender { return s }, false},
		{"starved", func(s *simServer) Sender { return slowHandOff{s} }, true},
	} {
		sim := &simServer{service: constant(10 * ms)}
		k := &keep{}
		d := New(Options{Clock: sim, Sender: c.sender(sim), Measured: k.measured})
		lv := Requests{Source: fixed, Load: Load{Concurrency: 4, Requests: 40, Warmup: -1}}
		if _, err := d.RunRequests(context.Background(), lv); err != nil {
			t.Fatal(err)
		}
		late := 0
		for _, r := range k.recs {
			if r.Lateness >= 10*ms {
				late++
			} else if !c.starved && r.Lateness != 0 {
				t.Fatalf("%s: request %d counted %v late", c.name, r.Index, r.Lateness)
			}
		}
		if c.starved && late < len(k.recs)/2 || !c.starved && late != 0 || len(k.recs) != 40 {
			t.Errorf("%s: %d of %d requests counted late", c.name, late, len(k.recs))
		}
	}
}
