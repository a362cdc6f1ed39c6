package driver

import (
	"context"
	"testing"
	"time"
)

// turnCounter is a simServer that counts the sends between two looks at
// its clock: the dispatcher reads the clock once a turn.
type turnCounter struct {
	*simServer
	sends, most int
}

func (c *turnCounter) Now() time.Duration {
	c.sends = 0
	return c.simServer.Now()
}

func (c *turnCounter) Send(ctx context.Context, f *Flight) {
	c.sends++
	c.most = max(c.most, c.sends)
	c.simServer.Send(ctx, f)
}

// TestOverdueArrivalsTakenATurnAtATime: 20,000 arrivals due at one
// instant, no cap on requests in flight: every one is sent, on time, but
// at most maxStartsPerTurn a turn, so a client far behind its schedule
// holds a turn's worth in memory and sees a signal between turns.
func TestOverdueArrivalsTakenATurnAtATime(t *testing.T) {
	trace := make([]time.Duration, 20000)
	sim := &turnCounter{simServer: &simServer{service: constant(100 * ms)}}
	k := &keep{}
	d := New(Options{Clock: sim, Sender: sim, Measured: k.measured})
	out, err := d.RunRequests(context.Background(), Requests{Source: fixed, Load: Load{Rate: 1, Burstiness: 1, Trace: trace, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	late := 0
	for _, r := range k.recs {
		if r.Lateness > 0 {
			late++
		}
	}
	if len(k.recs) != len(trace) || out.Window.Unsent != 0 || late != 0 {
		t.Errorf("%d of %d measured, %d unsent, %d late", len(k.recs), len(trace), out.Window.Unsent, late)
	}
	if sim.most > maxStartsPerTurn {
		t.Errorf("%d sends in one turn, at most %d", sim.most, maxStartsPerTurn)
	}
}
