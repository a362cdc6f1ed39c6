package driver

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// rampLevel runs a level with a ramp in virtual time and returns every
// record, ramp's included, and the window.
func rampLevel(t *testing.T, load Load, service time.Duration) ([]results.RecordLine, Window) {
	t.Helper()
	var buf bytes.Buffer
	sim := &simServer{service: constant(service)}
	w := record.NewWriter(&buf, time.Unix(0, 0), nil)
	d := New(Options{Clock: sim, Sender: sim, Records: w})
	out, err := d.RunRequests(context.Background(), Requests{Source: fixed, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Counts(); c.InFlight.Load() != 0 {
		t.Fatalf("%d requests still in flight after the level", c.InFlight.Load())
	}
	w.Flush()
	lines, err := results.ReadRecords(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return lines, out.Window
}

// TestRampIntoTheWindow: a linear ramp of 10 s into 10/s sends its
// arrivals unmeasured, rising through the ramp, and the window then
// starts at the ramp's end with the ramp's requests still running; the
// window's schedule is the one it has without a ramp, 10 s later.
func TestRampIntoTheWindow(t *testing.T) {
	const ramp, span = 10 * time.Second, 10 * time.Second
	load := Load{Rate: 10, Burstiness: 1, Seed: 3, Duration: span, Ramp: workload.Ramp{Duration: ramp, From: -1}}
	lines, w := rampLevel(t, load, 2*time.Second)
	dues := expectedDues(t, 10, 1, 3, span)
	var measured, ramped []results.RecordLine
	for _, l := range lines {
		if l.Warmup {
			ramped = append(ramped, l)
		} else {
			measured = append(measured, l)
		}
	}
	if len(measured) != len(dues) || w.Start != ramp {
		t.Fatalf("%d measured (want %d), window from %v (want %v)", len(measured), len(dues), w.Start, ramp)
	}
	for i, l := range measured {
		if due := time.Duration(l.ScheduledUnixNs); due != ramp+dues[i] {
			t.Fatalf("measured request %d due at %v, want %v", i, due, ramp+dues[i])
		}
	}
	// The ramp: its expected 50 arrivals (1 + Λ(D); Poisson spread), a
	// quarter of them in its first half, all due before the window.
	var early int
	var busyAtStart int
	for _, l := range ramped {
		due := time.Duration(l.ScheduledUnixNs)
		if due >= ramp {
			t.Errorf("a ramp request due at %v, in the window", due)
		}
		if due < ramp/2 {
			early++
		}
		if sent, done := time.Duration(l.SentUnixNs), time.Duration(l.DoneUnixNs); sent <= ramp && done > ramp {
			busyAtStart++
		}
	}
	if n := float64(len(ramped)); n < 51-4*7.1 || n > 51+4*7.1 || float64(early) > n/2 {
		t.Errorf("%d ramp arrivals, %d of them in its first half: want about 51, a quarter early", len(ramped), early)
	}
	if busyAtStart < 5 {
		t.Errorf("%d ramp requests were running as the window started: the ramp did not load the server", busyAtStart)
	}
}

// TestRampHoldsTheCap: with a cap of four in flight, the ramp's requests
// still running hold their slots into the window: never more than four
// run at once.
func TestRampHoldsTheCap(t *testing.T) {
	load := Load{Rate: 10, Burstiness: 1, Seed: 9, Duration: 5 * time.Second, MaxConcurrency: 4,
		Ramp: workload.Ramp{Duration: 5 * time.Second, From: -1, Exponential: true}}
	lines, _ := rampLevel(t, load, 900*ms)
	for _, a := range lines {
		running := 0
		for _, b := range lines {
			if b.SentUnixNs <= a.SentUnixNs && a.SentUnixNs < b.DoneUnixNs {
				running++
			}
		}
		if running > 4 {
			t.Fatalf("%d requests in flight when request %d (warm-up %v) was sent", running, a.Index, a.Warmup)
		}
	}
}

// TestRampOnBothClocks: the wall clock measures what the virtual one
// does with a ramp.
func TestRampOnBothClocks(t *testing.T) {
	bothClocks(t, scenario{service: constant(700 * ms), requests: &Requests{Source: fixed,
		Load: Load{Rate: 8, Burstiness: 1, Seed: 4, Duration: 3 * time.Second, Ramp: workload.Ramp{Duration: 2 * time.Second, From: 1}}}})
}

// TestRampRefused: a ramp needs an open loop of its own schedule.
func TestRampRefused(t *testing.T) {
	for _, l := range []Load{
		{Concurrency: 2, Requests: 4, Ramp: workload.Ramp{Duration: time.Second, From: -1}},
		{Rate: 2, Burstiness: 1, Trace: []time.Duration{0, time.Second}, Ramp: workload.Ramp{Duration: time.Second, From: -1}},
		{Rate: 2, Burstiness: 1, Requests: 3, Ramp: workload.Ramp{Duration: time.Second, From: 0, Exponential: true}},
	} {
		if err := l.Validate(); err == nil {
			t.Errorf("%+v accepted", l)
		}
	}
}

// TestRampCancelled: a level cancelled in its ramp cuts the ramp's
// requests, waits for their ends and measures nothing.
func TestRampCancelled(t *testing.T) {
	out := bothClocks(t, scenario{service: constant(3 * time.Second), cancelAt: 1500 * ms, requests: &Requests{Source: fixed,
		Load: Load{Rate: 8, Burstiness: 1, Seed: 4, Duration: 3 * time.Second, Ramp: workload.Ramp{Duration: 2 * time.Second, From: -1}}}})
	if len(out.recs) != 0 || out.sent == 0 || out.inFlight != 0 {
		t.Errorf("measured %d, sent %d, %d left in flight", len(out.recs), out.sent, out.inFlight)
	}
}
