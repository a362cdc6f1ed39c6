package cmd

import (
	"fmt"
	"testing"
)

// TestConversationsClosedLoop: a multi_turn file under --concurrency runs
// as AIPerf runs it: two slots, each holding one session and sending its
// turns in order, taking the next session only as one ends; the result
// says closed loop and offers no rate to keep pace with.
func TestConversationsClosedLoop(t *testing.T) {
	t.Parallel()
	inBubble(t, testConversationsClosedLoop)
}

func testConversationsClosedLoop(t *testing.T) {
	url, sent := recordingServer(t)
	var lines []any
	for s := range 5 {
		lines = append(lines, map[string]any{"session_id": fmt.Sprint(s), "turns": []any{
			map[string]any{"role": "system", "text": fmt.Sprintf("session %d", s)},
			map[string]any{"text": "one"}, map[string]any{"text": "two", "delay": 10}, map[string]any{"text": "three", "delay": 10},
		}})
	}
	file := writeLines(t, "sessions.jsonl", lines)
	before := len(sent())
	r := runJSON(t, "run", "--base-url", url, "--dataset", file, "--concurrency", "2", "--calls", "5", "--no-server-metrics")
	c := r.Config
	if c.Workload != "conversations" || c.Mode != "closed" || c.Concurrency != 2 || r.Requests.OK != 15 {
		t.Fatalf("workload %q mode %q concurrency %d, %d ok", c.Workload, c.Mode, c.Concurrency, r.Requests.OK)
	}
	if cl := r.Calls; cl == nil || cl.Started != 5 || cl.Completed != 5 || cl.TurnsOfferedPerS != 0 || r.Arrivals.OfferedRate != 0 {
		t.Errorf("calls %+v, offered %v: a closed loop offers no rate", r.Calls, r.Arrivals.OfferedRate)
	}
	turns := sent()[before:]
	turns = turns[len(turns)-15:] // the probes come first
	next := map[string]int{}      // a session's next turn, from 1
	open := map[string]bool{}
	for _, msgs := range turns {
		s := msgs[0]["content"]
		next[s]++
		if k := next[s]; len(msgs) != 2*k {
			t.Fatalf("%s turn %d carries %d messages, want %d: turns out of order", s, k, len(msgs), 2*k)
		}
		switch next[s] {
		case 1:
			if len(open) >= 2 {
				t.Fatalf("%s began while %v were still running: more sessions than slots", s, open)
			}
			open[s] = true
		case 3:
			delete(open, s)
		}
	}
	if len(next) != 5 {
		t.Errorf("%d sessions sent, want 5", len(next))
	}
}
