package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// lateShardRun runs an open loop whose window starts at startAt and
// returns its result and records.
func lateShardRun(t *testing.T, url string, startAt time.Time) (sent, ok int64, windowArrivals int64, recs []results.RecordLine, late int64, windowS float64) {
	t.Helper()
	var buf bytes.Buffer
	live := &Live{Client: newTestClient(t, url, 5*time.Second, 32), StartAt: startAt}
	res, err := live.Run(context.Background(), &bench.Level{Records: &buf, Work: bench.Requests{
		Source: workload.FixedPrompt{Text: "hi", MaxTokens: 3},
		Load:   driver.Load{Rate: 100, Burstiness: 1, Duration: time.Second, Seed: 7, Warmup: -1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var r results.RecordLine
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return res.Requests.Sent, res.Requests.OK, res.Arrivals.WindowArrivals, recs, res.Arrivals.LateSends, res.WindowSeconds
}

// TestLateShardKeepsTheSchedule: a process that starts 400 ms after
// --start-at sends the same arrivals as one on time, the ones already due
// at once and measured from when they were due (their lateness is how
// overdue they were), the rest on time; the window is the schedule's,
// not shifted to when the process came.
func TestLateShardKeepsTheSchedule(t *testing.T) {
	t.Parallel()
	inBubble(t, testLateShardKeepsTheSchedule)
}

func testLateShardKeepsTheSchedule(t *testing.T) {
	url := fakeserver.Start(t, &fakeserver.Stream{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 3})
	const overdue = 400 * time.Millisecond
	var sentOn, okOn, arrOn, sentLate, okLate, arrLate, lateSends int64
	var recs []results.RecordLine
	var windowS float64
	var startedAt time.Time
	sentOn, okOn, arrOn, _, _, _ = lateShardRun(t, url, time.Now().Add(200*time.Millisecond))
	startedAt = time.Now()
	sentLate, okLate, arrLate, recs, lateSends, windowS = lateShardRun(t, url, startedAt.Add(-overdue))
	if sentLate != sentOn || okLate != okOn || arrLate != arrOn {
		t.Errorf("late shard sent %d (%d ok) of %d arrivals, on time %d (%d ok) of %d: the totals must not change", sentLate, okLate, arrLate, sentOn, okOn, arrOn)
	}
	if windowS > 1.4 {
		t.Errorf("window %.2f s, want the schedule's 1 s and its drain", windowS)
	}
	// The process is ready to send at its first send: setting a level up
	// takes a while (a tenth of a second under the race detector), and
	// what was due by then goes out at once, the rest on schedule.
	var ready time.Time
	for _, r := range recs {
		if sent := time.Unix(0, r.SentUnixNs); !r.Warmup && (ready.IsZero() || sent.Before(ready)) {
			ready = sent
		}
	}
	if setup := ready.Sub(startedAt); setup > overdue/2 {
		t.Fatalf("the late process first sent %v after it started: too slow to tell at once from on schedule", setup)
	}
	due := 0
	for _, r := range recs {
		if r.Warmup {
			continue
		}
		scheduled := time.Unix(0, r.ScheduledUnixNs)
		lateness, sent := time.Duration(r.LatenessNs), time.Unix(0, r.SentUnixNs)
		if overdue := startedAt.Sub(scheduled); overdue > 0 {
			due++
			if lateness < overdue-10*time.Millisecond {
				t.Errorf("arrival due %v before the process started went out %v late: lateness must count from when it was due", overdue, lateness)
			}
		}
		switch {
		case scheduled.Before(ready) && sent.Sub(ready) > 100*time.Millisecond:
			t.Errorf("arrival already due was sent %v after the process was ready, not at once", sent.Sub(ready))
		case !scheduled.Before(ready) && lateness > 50*time.Millisecond:
			t.Errorf("arrival due %v after the process was ready went out %v late", scheduled.Sub(ready), lateness)
		}
	}
	// 100/s for 400 ms: about 40 were already due.
	if due < 20 || due > 60 {
		t.Fatalf("%d arrivals were already due when the process started, want about 40", due)
	}
	if lateSends < int64(due)-2 {
		t.Errorf("%d late sends counted, want the %d already due", lateSends, due)
	}
}
